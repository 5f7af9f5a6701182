// The main thread's side of the PostgreSQL store (issue 27; docs/decisions/
// multi-node-store.md "How the daemon talks to PostgreSQL"). The calls
// domain uses its store synchronously, as it uses SQLite; this bridge keeps
// that contract for a database server: each repository call is posted to
// the store worker, and the main thread waits for the answer with
// Atomics.wait, as it waits for SQLite's disk. A wait longer than the
// timeout throws StoreUnavailableError (the request fails; nothing hangs).
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import type { Clock } from '../../clock.js';
import { ConfigGenerations } from './config-generations.js';
import type { BridgeReply, BridgeRequest, StoreWorkerData } from './store-bridge-protocol.js';

/** Distributes the union over its members, so each request keeps its own fields. */
type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type BridgeOp = Without<BridgeRequest, 'id'>;

export interface StoreBridgeOptions {
  url: string;
  nodeId: string;
  poolMax: number;
  /** The longest the main thread waits for one answer, and PostgreSQL's statement_timeout. */
  timeoutMs: number;
  clock: Clock;
}

/** PostgreSQL did not answer in time, or the worker is gone. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/** An error the database reported, with its SQLSTATE. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export class StoreBridge {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  private nextId = 0;
  private nextTx = 0;
  /** Posted steps whose answers have not been read, with their transactions. */
  private readonly posted = new Map<number, number | undefined>();
  /** The first failure of a transaction's posted steps, until its next wait. */
  private readonly postedErrors = new Map<number, StoreError>();
  /** Commits answered asynchronously (commitAsync), by request id. */
  private readonly commits = new Map<
    number,
    { tx: number; resolve: () => void; reject: (err: Error) => void }
  >();
  private dead: Error | undefined;
  /** What the main thread may answer from its cache (config-cache.ts). */
  readonly generations = new ConfigGenerations();
  /** Told after a call that wrote webhook deliveries. */
  onWebhookWritten: (() => void) | undefined;
  /** The worker thread's kernel id, once it has said (thread-cpu.ts). */
  workerThreadId: number | null = null;

  constructor(private readonly opts: StoreBridgeOptions) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const shared = new SharedArrayBuffer(4);
    this.signal = new Int32Array(shared);
    const here = import.meta.url;
    const data: StoreWorkerData = {
      url: opts.url,
      nodeId: opts.nodeId,
      poolMax: opts.poolMax,
      statementTimeoutMs: opts.timeoutMs,
      port: port2,
      signal: shared,
      generations: this.generations.buffer,
    };
    // The sources run under tsx (npm start, the tests): boot the .ts entry through it.
    this.worker = here.endsWith('.ts')
      ? new Worker(new URL('../../tsx-worker-boot.mjs', here), {
          workerData: { ...data, entry: new URL('./store-worker.ts', here).href },
          transferList: [port2],
        })
      : new Worker(new URL('./store-worker.js', here), { workerData: data, transferList: [port2] });
    this.worker.on('message', (m: { tid?: number | null }) => {
      if (typeof m.tid === 'number') this.workerThreadId = m.tid;
    });
    this.worker.on('error', (err) => this.die(err));
    this.worker.on('exit', (code) => this.die(new Error(`store worker exited with ${code}`)));
    this.worker.unref();
    // Answers that arrive while the main thread is not waiting (an asynchronous commit's).
    this.port.on('message', (reply: BridgeReply) => this.dispatch(reply));
    this.port.unref();
  }

  /** A new transaction's id, for the requests that belong to it. */
  newTransaction(): number {
    return ++this.nextTx;
  }

  /**
   * Sends `op` without waiting for its answer: a step of an open transaction
   * whose result nobody reads (BEGIN and its locks, a savepoint, an insert).
   * The worker runs it in order before the transaction's next step; if it
   * fails, the transaction's next wait throws its error, and the worker
   * fails the later steps with it (store-worker.ts), so nothing after it
   * commits.
   */
  post(op: BridgeOp & { tx: number }): void {
    if (this.dead) throw new StoreUnavailableError(`store unavailable: ${this.dead.message}`);
    const id = ++this.nextId;
    this.posted.set(id, op.tx);
    this.port.postMessage({ ...op, id } as BridgeRequest);
  }

  /**
   * Commits transaction `tx` without blocking: the promise settles when
   * PostgreSQL has answered, and the main thread goes on meanwhile (the
   * worker commits it beside the next transaction, on its own connection).
   * It rejects with the first failure of the transaction's posted steps.
   */
  commitAsync(tx: number): Promise<void> {
    if (this.dead)
      return Promise.reject(new StoreUnavailableError(`store unavailable: ${this.dead.message}`));
    const id = ++this.nextId;
    const done = new Promise<void>((resolve, reject) => {
      this.commits.set(id, { tx, resolve, reject });
    });
    if (this.commits.size === 1) this.port.ref();
    this.port.postMessage({ op: 'commit', tx, id } satisfies BridgeRequest);
    return done;
  }

  /** Sends `op` to the worker and blocks until its answer (or the timeout, by default store.timeoutMs). */
  call(op: BridgeOp, timeoutMs = this.opts.timeoutMs): unknown {
    if (this.dead) throw new StoreUnavailableError(`store unavailable: ${this.dead.message}`);
    const id = ++this.nextId;
    Atomics.store(this.signal, 0, 0);
    this.port.postMessage({ ...op, id } as BridgeRequest);
    const deadline = this.opts.clock.now() + timeoutMs;
    for (;;) {
      const got = receiveMessageOnPort(this.port) as { message: BridgeReply } | undefined;
      if (got) {
        const reply = got.message;
        if (reply.id !== id) {
          this.dispatch(reply); // a posted step's, a commit's, or one that timed out
          continue;
        }
        if (reply.webhookWritten) this.onWebhookWritten?.();
        // The transaction's posted steps were answered before this.
        const postedError = op.tx === undefined ? undefined : this.postedErrors.get(op.tx);
        if (postedError) {
          this.postedErrors.delete(op.tx!);
          throw postedError;
        }
        if (!reply.ok) throw new StoreError(reply.error.message, reply.error.code);
        return reply.value;
      }
      const left = deadline - this.opts.clock.now();
      const dead = this.deadReason();
      if (left <= 0 || dead) {
        if (op.tx !== undefined) this.forget(op.tx); // their late answers are dropped like this call's
        throw new StoreUnavailableError(
          dead ? `store unavailable: ${dead}` : 'the database did not answer in time',
        );
      }
      Atomics.wait(this.signal, 0, 0, left);
      Atomics.store(this.signal, 0, 0);
    }
  }

  /** An answer nobody is blocked on: a posted step's, a commit's, or a late one (dropped). */
  private dispatch(reply: BridgeReply): void {
    if (reply.webhookWritten) this.onWebhookWritten?.();
    if (this.posted.has(reply.id)) {
      const tx = this.posted.get(reply.id)!;
      this.posted.delete(reply.id);
      if (!reply.ok && !this.postedErrors.has(tx))
        this.postedErrors.set(tx, new StoreError(reply.error.message, reply.error.code));
      return;
    }
    const commit = this.commits.get(reply.id);
    if (!commit) return;
    this.settle(
      reply.id,
      reply.ok ? undefined : new StoreError(reply.error.message, reply.error.code),
    );
  }

  private settle(id: number, err: Error | undefined): void {
    const commit = this.commits.get(id)!;
    this.commits.delete(id);
    if (this.commits.size === 0) this.port.unref();
    const first = this.postedErrors.get(commit.tx) ?? err;
    this.forget(commit.tx);
    if (first) commit.reject(first);
    else commit.resolve();
  }

  /** Drops what is known of transaction `tx`'s posted steps. */
  private forget(tx: number): void {
    this.postedErrors.delete(tx);
    for (const [id, t] of this.posted) if (t === tx) this.posted.delete(id);
  }

  private die(err: Error): void {
    this.dead ??= err;
    for (const id of [...this.commits.keys()])
      this.settle(id, new StoreUnavailableError(`store unavailable: ${this.dead.message}`));
  }

  /** Why the worker is gone (set by its error and exit events, between waits). */
  private deadReason(): string | undefined {
    return this.dead?.message;
  }

  /** Ends the pool and the worker. */
  close(): void {
    try {
      if (!this.dead) this.call({ op: 'close' });
    } catch {
      // a pool that does not end in time goes with the worker
    } finally {
      this.dead ??= new Error('closed');
      void this.worker.terminate();
    }
  }
}
