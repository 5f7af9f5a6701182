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
  private dead: Error | undefined;
  /** Told after a call that wrote webhook deliveries. */
  onWebhookWritten: (() => void) | undefined;

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
    };
    // The sources run under tsx (npm start, the tests): boot the .ts entry through it.
    this.worker = here.endsWith('.ts')
      ? new Worker(new URL('../../tsx-worker-boot.mjs', here), {
          workerData: { ...data, entry: new URL('./store-worker.ts', here).href },
          transferList: [port2],
        })
      : new Worker(new URL('./store-worker.js', here), { workerData: data, transferList: [port2] });
    this.worker.on('error', (err) => (this.dead = err));
    this.worker.on('exit', (code) => (this.dead ??= new Error(`store worker exited with ${code}`)));
    this.worker.unref();
    this.port.unref();
  }

  /** Sends `op` to the worker and blocks until its answer (or the timeout). */
  call(op: BridgeOp): unknown {
    if (this.dead) throw new StoreUnavailableError(`store unavailable: ${this.dead.message}`);
    const id = ++this.nextId;
    Atomics.store(this.signal, 0, 0);
    this.port.postMessage({ ...op, id } as BridgeRequest);
    const deadline = this.opts.clock.now() + this.opts.timeoutMs;
    for (;;) {
      const got = receiveMessageOnPort(this.port) as { message: BridgeReply } | undefined;
      if (got) {
        const reply = got.message;
        if (reply.id !== id) continue; // the late answer to a call that timed out
        if (!reply.ok) throw new StoreError(reply.error.message, reply.error.code);
        if (reply.webhookWritten) this.onWebhookWritten?.();
        return reply.value;
      }
      const left = deadline - this.opts.clock.now();
      const dead = this.deadReason();
      if (left <= 0 || dead)
        throw new StoreUnavailableError(
          dead ? `store unavailable: ${dead}` : 'the database did not answer in time',
        );
      Atomics.wait(this.signal, 0, 0, left);
      Atomics.store(this.signal, 0, 0);
    }
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
