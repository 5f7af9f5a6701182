// All repositories over one database handle.
import { SqliteApiKeyRepository } from './api-key-repository.js';
import { SqliteCallHistoryRepository } from './call-history-repository.js';
import { SqliteCallRepository } from './call-repository.js';
import { SqliteCompanyRepository } from './company-repository.js';
import type { Db } from './database.js';
import { DocumentRepository } from './document-repository.js';
import { SqliteLiveDialogRepository } from './live-dialog-repository.js';
import type { Agent, OutboundRoute, SipTrunk, VoipPhone } from '../model/entities.js';
import { SqliteOptOutRepository } from './opt-out-repository.js';
import { SqliteScheduleRepository } from './schedule-repository.js';
import { timeWrites, type StoreWriteTimings } from './sqlite-write-timings.js';
import { checkpointInWorker } from './wal-checkpointer.js';
import { WalSync } from './wal-sync.js';
import { SqliteWebhookRepository } from './webhook-repository.js';

/** The public methods of a repository: what a store on another database must answer alike. */
export type RepositoryOf<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K];
};

/**
 * A unit of work: `fn` runs as one transaction (savepoints when nested).
 * `serializeOn` names what the decision inside is about (model/
 * serialization-keys.ts): a store shared by several daemons runs two
 * transactions naming one key one after the other; SQLite, a single
 * writer, serializes every transaction anyway.
 */
export interface StoreUnitOfWork {
  run<T>(fn: () => T, serializeOn?: readonly string[]): T;
  /**
   * `run`, with the commit waited for without blocking: the promise
   * resolves with `fn`'s value once its writes are durable, and the daemon
   * goes on meanwhile (PostgreSQL: the commit is a round trip with a WAL
   * flush; SQLite: `run`, then `durable`). `onRan` is told when `fn` has
   * run and only the commit's durability is awaited.
   */
  runDurable<T>(fn: () => T, serializeOn?: readonly string[], onRan?: () => void): Promise<T>;
  /**
   * Resolves once everything committed so far is on disk (SQLite: the WAL's
   * group fsync, wal-sync.ts; PostgreSQL: at once, its commits are durable
   * when they return). What reports a write outside the daemon waits for it.
   */
  durable(): Promise<void>;
}

/** Every repository of one database: SQLite (this file) or PostgreSQL (pg/pg-store.ts). */
export interface Store {
  unitOfWork: StoreUnitOfWork;
  companies: RepositoryOf<SqliteCompanyRepository>;
  apiKeys: RepositoryOf<SqliteApiKeyRepository>;
  agents: RepositoryOf<DocumentRepository<Agent>>;
  sipTrunks: RepositoryOf<DocumentRepository<SipTrunk>>;
  voipPhones: RepositoryOf<DocumentRepository<VoipPhone>>;
  outboundRoutes: RepositoryOf<DocumentRepository<OutboundRoute>>;
  calls: RepositoryOf<SqliteCallRepository>;
  optOuts: RepositoryOf<SqliteOptOutRepository>;
  schedules: RepositoryOf<SqliteScheduleRepository>;
  callHistory: RepositoryOf<SqliteCallHistoryRepository>;
  dialogs: RepositoryOf<SqliteLiveDialogRepository>;
  /** Webhook endpoints and the outbox of their events (issue 25). */
  webhooks: RepositoryOf<SqliteWebhookRepository> & {
    /** Told (inside the transaction: defer the work) when deliveries were written. */
    onWritten: (() => void) | undefined;
  };
  /** Which database: shown by /health and the CLI. */
  readonly kind: 'sqlite' | 'postgres';
  close(): void;
}

/** The embedded store: a SQLite file. */
export interface SqliteStore extends Store {
  db: Db;
  /** Asks for a WAL checkpoint off the event loop, when the store was opened with `checkpointInWorker`. */
  checkpoint?: () => void;
  /** How long its writes and commits take, when `timeWrites` was asked for (the daemon's /metrics). */
  writeTimings?: StoreWriteTimings;
}

/**
 * The repositories over `db`. `timed`: its writes are timed from now on
 * (sqlite-write-timings.ts). `checkpointInWorker`: the WAL is checkpointed
 * by a worker thread when `checkpoint()` asks, never by a commit on this
 * connection (wal-checkpointer.ts).
 */
export function createStore(
  db: Db,
  opts: { timed?: boolean; checkpointInWorker?: boolean } = {},
): SqliteStore {
  const writeTimings = opts.timed ? timeWrites(db) : undefined;
  const checkpointer =
    opts.checkpointInWorker && !db.memory
      ? checkpointInWorker(db, writeTimings && ((ms) => writeTimings.checkpoints.record(ms)))
      : undefined;
  // one connection, one WalSync: it counts that connection's changes
  const totalChanges = db.prepare('SELECT total_changes()').pluck();
  const wal = db.memory
    ? undefined
    : new WalSync({
        walPath: `${db.name}-wal`,
        changes: () => totalChanges.get() as number,
        ...(writeTimings ? { onSynced: (ms: number) => writeTimings.fsyncs.record(ms) } : {}),
      });
  const durable = (): Promise<void> => (wal ? wal.sync() : Promise.resolve());
  const webhooks = new SqliteWebhookRepository(db);
  // Each change of a call record writes the events it reports in its own transaction.
  const calls = new SqliteCallRepository(db, (before, after, at) =>
    webhooks.recordCallChange(before, after, at),
  );
  const optOuts = new SqliteOptOutRepository(db);
  return {
    db,
    ...(writeTimings ? { writeTimings } : {}),
    kind: 'sqlite',
    ...(checkpointer ? { checkpoint: () => checkpointer.checkpoint() } : {}),
    close: () => {
      void wal?.close();
      void checkpointer?.close();
      db.close();
    },
    unitOfWork: {
      run: (fn) => db.transaction(fn)(),
      runDurable: async (fn, _serializeOn, onRan) => {
        const value = db.transaction(fn)();
        onRan?.();
        await durable();
        return value;
      },
      durable,
    },
    companies: new SqliteCompanyRepository(db),
    apiKeys: new SqliteApiKeyRepository(db),
    agents: new DocumentRepository<Agent>(db, 'agent'),
    sipTrunks: new DocumentRepository<SipTrunk>(db, 'sip_trunk'),
    voipPhones: new DocumentRepository<VoipPhone>(db, 'voip_phone'),
    outboundRoutes: new DocumentRepository<OutboundRoute>(db, 'outbound_route'),
    calls,
    optOuts,
    schedules: new SqliteScheduleRepository(db),
    callHistory: new SqliteCallHistoryRepository(db, calls, optOuts),
    dialogs: new SqliteLiveDialogRepository(db),
    webhooks,
  };
}
