// Checkpoints of the SQLite file's WAL, off the event loop (docs/decisions/
// group-commit.md, "Checkpoints"). By default SQLite checkpoints on the
// connection that commits, once the WAL passes 1,000 pages
// (https://sqlite.org/wal.html#automatic_checkpoint): on the daemon's one
// connection that is the main thread, blocked for a page copy and two
// fsyncs every few seconds under load (4 to 13 ms each on this machine's
// disk, more when it is busy). The daemon's connection turns that off
// (wal_autocheckpoint = 0) and this asks a worker thread with its own
// connection for a PASSIVE checkpoint on a tick: one at a time, the next
// only after the last one answered.
import { Worker } from 'node:worker_threads';
import type { Db } from './database.js';

/** SQLite's default automatic checkpoint, in WAL pages (https://sqlite.org/wal.html). */
const SQLITE_AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Takes the checkpoints off `db`'s connection and gives them to a worker.
 * If the worker fails, SQLite's own checkpoints come back on that
 * connection, rather than a WAL that only grows.
 */
export function checkpointInWorker(db: Db, onCheckpoint?: (ms: number) => void): WalCheckpointer {
  db.pragma('wal_autocheckpoint = 0');
  return new WalCheckpointer(db.name, {
    ...(onCheckpoint ? { onCheckpoint } : {}),
    onError: () => void db.pragma(`wal_autocheckpoint = ${SQLITE_AUTO_CHECKPOINT_PAGES}`),
  });
}

export interface CheckpointWorkerData {
  /** The database file. */
  path: string;
}

/** One checkpoint's outcome, from the worker. */
export type CheckpointReply =
  { ms: number; walFrames: number; checkpointed: number } | { ms: number; error: string };

export interface WalCheckpointerOptions {
  /** Told each checkpoint's duration, ms. */
  onCheckpoint?: (ms: number) => void;
  /** Told a checkpoint that failed (the WAL then grows until one succeeds). */
  onError?: (message: string) => void;
}

export class WalCheckpointer {
  private readonly worker: Worker;
  private running = false;
  private closed = false;
  private readonly exited: Promise<void>;
  private lastFigures: { walFrames: number; checkpointed: number } | undefined;
  private answers = 0;

  constructor(
    path: string,
    private readonly o: WalCheckpointerOptions = {},
  ) {
    const data: CheckpointWorkerData = { path };
    const here = import.meta.url;
    // The sources run under tsx (npm start, the tests): boot the .ts entry through it.
    this.worker = here.endsWith('.ts')
      ? new Worker(new URL('../tsx-worker-boot.mjs', here), {
          workerData: { ...data, entry: new URL('./wal-checkpoint-worker.ts', here).href },
        })
      : new Worker(new URL('./wal-checkpoint-worker.js', here), { workerData: data });
    this.worker.unref(); // it never keeps the process alive
    this.exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (r: CheckpointReply) => this.onReply(r));
    this.worker.on('error', (err) => this.o.onError?.(String(err)));
  }

  /** The last checkpoint's figures: frames in the WAL, and how many are in the database. */
  get last(): Readonly<{ walFrames: number; checkpointed: number }> | undefined {
    return this.lastFigures;
  }

  /** Checkpoints that answered, failed or not. */
  get answered(): number {
    return this.answers;
  }

  /** Asks for a checkpoint, unless one is running. */
  checkpoint(): void {
    if (this.running || this.closed) return;
    this.running = true;
    this.worker.postMessage('checkpoint');
  }

  /** Resolves once the worker has closed its connection and ended. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.worker.postMessage('close'); // dropped by a worker that has already ended
    await this.exited;
  }

  private onReply(r: CheckpointReply): void {
    this.running = false;
    this.answers += 1;
    this.o.onCheckpoint?.(r.ms);
    if ('error' in r) this.o.onError?.(r.error);
    else this.lastFigures = { walFrames: r.walFrames, checkpointed: r.checkpointed };
  }
}
