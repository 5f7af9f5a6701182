// How long the SQLite file's writes take (issue 28: the load runner's
// per-component breakdown): every write statement that succeeded, and every commit with the
// synchronous level it committed under. In WAL mode a commit under FULL
// syncs the WAL to disk (https://sqlite.org/pragma.html#pragma_synchronous),
// one under NORMAL (the daemon's: database.ts) does not. A commit is an
// outermost transaction from BEGIN to COMMIT, or a write run outside any
// transaction (SQLite commits it on its own). Two clock reads per write;
// the figures are read when /metrics is scraped.
import { LatencyHistogram } from '../latency-histogram.js';
import type { Db } from './database.js';

/** Statement runs and commits take microseconds to (with an fsync) tens of milliseconds. */
export const STORE_WRITE_BOUNDS_MS = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 250, 1000,
];

export interface StoreWriteTimings {
  /** Each write statement's run, ms (inside a transaction: without its commit). */
  writes: LatencyHistogram;
  /** Commits under synchronous=FULL (the WAL fsynced), ms, the transaction's statements included. */
  commitsFull: LatencyHistogram;
  /** Commits under synchronous=NORMAL (no fsync), ms. */
  commitsNormal: LatencyHistogram;
  /** The WAL's group fsyncs (wal-sync.ts), off the event loop, ms. */
  fsyncs: LatencyHistogram;
  /** The WAL's checkpoints in a worker thread (wal-checkpointer.ts), ms. */
  checkpoints: LatencyHistogram;
}

/** `synchronous = NORMAL` and the like, as database.ts sets it. */
const SYNCHRONOUS = /^\s*synchronous\s*=\s*(\w+)\s*$/i;

/**
 * Times `db`'s writes from now on: wraps `prepare` (write statements' `run`, and `get`/`all` for RETURNING),
 * `transaction` (the outermost call) and `pragma` (to follow the synchronous
 * level). Reads are left as they are; the variants (`.immediate()` and the
 * like, which the daemon does not use) run untimed.
 */
export function timeWrites(db: Db, now: () => number = () => performance.now()): StoreWriteTimings {
  const t: StoreWriteTimings = {
    writes: new LatencyHistogram(STORE_WRITE_BOUNDS_MS),
    commitsFull: new LatencyHistogram(STORE_WRITE_BOUNDS_MS),
    commitsNormal: new LatencyHistogram(STORE_WRITE_BOUNDS_MS),
    fsyncs: new LatencyHistogram(STORE_WRITE_BOUNDS_MS),
    checkpoints: new LatencyHistogram(STORE_WRITE_BOUNDS_MS),
  };
  let full = String(db.pragma('synchronous', { simple: true })) === '2';
  const commit = (ms: number) => (full ? t.commitsFull : t.commitsNormal).record(ms);

  const pragma = db.pragma.bind(db);
  db.pragma = ((source: string, options?: Parameters<Db['pragma']>[1]) => {
    const result = pragma(source, options);
    const level = SYNCHRONOUS.exec(source)?.[1]?.toUpperCase();
    if (level !== undefined) full = level === 'FULL' || level === '2' || level === 'EXTRA';
    return result;
  }) as Db['pragma'];

  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    if (statement.readonly) return statement;
    // a write with RETURNING answers through get/all
    for (const method of ['run', 'get', 'all'] as const) {
      const call = (statement[method] as (...a: unknown[]) => unknown).bind(statement);
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const alone = !db.inTransaction;
        const start = now();
        const result = call(...args);
        const ms = now() - start;
        t.writes.record(ms);
        if (alone) commit(ms);
        return result;
      };
    }
    return statement;
  }) as Db['prepare'];

  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...a: unknown[]) => unknown) => {
    const inner = transaction(fn);
    const timed = (...args: unknown[]) => {
      if (db.inTransaction) return inner(...args); // a savepoint: the outer commit counts
      const start = now();
      const result = inner(...args); // a rollback throws: only commits are timed
      commit(now() - start);
      return result;
    };
    return Object.assign(timed, {
      deferred: inner.deferred,
      immediate: inner.immediate,
      exclusive: inner.exclusive,
      default: inner.default,
    });
  }) as Db['transaction'];
  return t;
}
