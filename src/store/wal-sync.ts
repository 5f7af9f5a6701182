// Group commit for the SQLite file (docs/decisions/group-commit.md).
// Transactions commit with synchronous=NORMAL: in WAL mode the commit is in
// the WAL once it returns, which survives kill -9 (the OS has it), but not
// yet a power loss. `sync()` makes every commit made before it power-safe
// with one fdatasync(2) of the WAL file (its data and what reading it back
// needs, the size; not its times), run on libuv's pool so that the event
// loop (media pacing, SIP, the agents' sockets) never waits on the disk; the
// callers that acknowledge something (an HTTP answer, an INVITE, a webhook)
// wait for it. Calls that arrive while an fsync runs share the next one:
// however many commits, one fsync at a time.
import { open, stat, type FileHandle } from 'node:fs/promises';

export interface WalSyncOptions {
  /** The WAL file: `<database>-wal` (https://sqlite.org/wal.html). */
  walPath: string;
  /** Changes committed so far on the connection: SQLite's total_changes(). */
  changes: () => number;
  /** Told each fsync's duration, ms. */
  onSynced?: (ms: number) => void;
  now?: () => number;
}

/** The WAL could not be made durable (the fsync failed): nothing waiting for it is confirmed. */
export class StoreNotDurableError extends Error {
  override readonly name = 'StoreNotDurableError';
}

export class WalSync {
  private handle: { file: FileHandle; ino: number } | undefined;
  /** The change count the last finished fsync covered. */
  private synced = 0;
  private running: Promise<void> | undefined;
  /** The change count the running fsync covers (read when it started). */
  private runningMark = 0;
  /** The fsync that starts when the running one ends (shared by everyone who asked meanwhile). */
  private next: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(private readonly o: WalSyncOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /** Resolves once every commit made before this call is on disk; rejects if the fsync failed. */
  sync(): Promise<void> {
    const mark = this.o.changes();
    if (mark <= this.synced) return Promise.resolve();
    if (!this.running) return (this.running = this.run());
    if (mark <= this.runningMark) return this.running;
    // the running fsync started before this commit: the next one covers it
    this.next ??= this.running.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  /** Closes the WAL file (the database closes after). */
  async close(): Promise<void> {
    await Promise.allSettled([this.running, this.next]);
    await this.handle?.file.close();
    this.handle = undefined;
  }

  private startNext(): Promise<void> {
    this.next = undefined;
    return (this.running = this.run());
  }

  private async run(): Promise<void> {
    const mark = this.o.changes();
    this.runningMark = mark;
    const start = this.now();
    try {
      try {
        const file = await this.walFile();
        if (file) await file.datasync();
      } catch (err) {
        throw new StoreNotDurableError(`the WAL was not synced: ${(err as Error).message}`, {
          cause: err,
        });
      }
      if (mark > this.synced) this.synced = mark;
      this.o.onSynced?.(this.now() - start);
    } finally {
      if (this.running && !this.next) this.running = undefined;
    }
  }

  /**
   * The WAL file, opened once and again if SQLite replaced it (it deletes
   * the file when the last connection closes); none before its first write.
   */
  private async walFile(): Promise<FileHandle | undefined> {
    const ino = await stat(this.o.walPath).then(
      (s) => s.ino,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      },
    );
    if (ino === undefined) return undefined;
    if (this.handle?.ino !== ino) {
      await this.handle?.file.close();
      this.handle = { file: await open(this.o.walPath, 'r'), ino };
    }
    return this.handle.file;
  }
}
