// The daemon's store on PostgreSQL (issue 27): the same Store as SQLite's,
// answered through the store worker (store-bridge.ts). Each repository is a
// facade whose methods are the worker's repository methods; the unit of
// work opens a transaction in the worker, takes the advisory lock of each
// key it serializes on (rule 2), runs `fn`, and commits. A deadlock or
// serialization failure runs `fn` again from the start, at most three times.
import type { CallUpdateOptions } from '../../model/call-record.js';
import type { Store, StoreUnitOfWork } from '../store.js';
import type { PgNodeRegistry } from './pg-node-registry.js';
import type { PgRepositories } from './pg-repositories.js';
import { RETRYABLE } from './pg-unit-of-work.js';
import { CONFIG_REPOS, ConfigCache, readKey } from './config-cache.js';
import { StoreBridge, StoreError, type StoreBridgeOptions } from './store-bridge.js';

const MAX_ATTEMPTS = 3;

export type PgStoreOptions = StoreBridgeOptions;

/** An asynchronous repository's methods, answered synchronously through the bridge. */
export type Blocking<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => unknown ? K : never]: T[K] extends (
    ...args: infer A
  ) => infer R
    ? (...args: A) => Awaited<R>
    : never;
};

/** The daemon's store on PostgreSQL, with the registry of the daemons sharing it. */
export interface PgStore extends Store {
  readonly kind: 'postgres';
  nodes: Blocking<PgNodeRegistry>;
  /** Whether other daemons' configuration changes are heard, so cached configuration is used. */
  hearsConfigChanges(): boolean;
  /** The store worker thread's kernel id, once known (the daemon's CPU by thread). */
  workerThreadId(): number | null;
}

/** The longest the worker may take to start and migrate before the store is unavailable. */
const START_TIMEOUT_MS = 30_000;

/** Opens the store: starts the worker and brings the schema up to date. */
export function openPgStore(opts: PgStoreOptions): PgStore {
  const bridge = new StoreBridge(opts);
  // The worker starts (its modules load, its pool connects) and migrates
  // first: that is start-up, not the statements store.timeoutMs bounds.
  bridge.call({ op: 'migrate' }, Math.max(opts.timeoutMs, START_TIMEOUT_MS));
  const unitOfWork = new PgBridgeUnitOfWork(bridge);
  const cache = new ConfigCache(bridge.generations);
  const repo = <K extends keyof PgRepositories | 'nodes'>(
    name: K,
    revive: (v: unknown) => unknown = (v) => v,
    outbound: (method: string, args: unknown[]) => unknown[] = (_m, args) => args,
  ) => {
    const policy = CONFIG_REPOS[name];
    return new Proxy(
      {},
      {
        get: (_target, method) =>
          typeof method !== 'string'
            ? undefined
            : (...given: unknown[]) => {
                const args = outbound(method, given);
                const tx = unitOfWork.tx;
                if (tx !== undefined && POSTED[name]?.[method]) {
                  bridge.post({ op: 'call', repo: name, method, args, tx });
                  return POSTED[name][method](args);
                }
                const load = () => bridge.call({ op: 'call', repo: name, method, args, tx });
                const table = policy?.cached[method];
                if (table && tx === undefined)
                  return revive(cache.read(table, readKey(name, method, args), load));
                try {
                  return revive(load());
                } finally {
                  const changed = policy?.writes[method];
                  if (changed) cache.changed(changed);
                }
              },
      },
    ) as never;
  };

  const webhooks = repo('webhooks') as Store['webhooks'];
  // The facade's own field: the worker says when deliveries were written.
  let onWritten: (() => void) | undefined;
  Object.defineProperty(webhooks, 'onWritten', {
    get: () => onWritten,
    set: (fn: (() => void) | undefined) => (onWritten = fn),
  });
  bridge.onWebhookWritten = () => onWritten?.();

  return {
    kind: 'postgres',
    unitOfWork,
    companies: repo('companies'),
    apiKeys: repo('apiKeys', reviveKeyHash),
    agents: repo('agents'),
    sipTrunks: repo('sipTrunks'),
    voipPhones: repo('voipPhones'),
    outboundRoutes: repo('outboundRoutes'),
    calls: repo('calls', undefined, withoutWritersCopy),
    optOuts: repo('optOuts'),
    schedules: repo('schedules'),
    callHistory: repo('callHistory'),
    dialogs: repo('dialogs'),
    webhooks,
    nodes: repo('nodes'),
    hearsConfigChanges: () => bridge.generations.listening,
    workerThreadId: () => bridge.workerThreadId,
    close: () => bridge.close(),
  };
}

/**
 * The writes inside a unit of work that are posted, not waited for (bridge
 * `post`), with what the caller gets back at once: their answer is known
 * before the database gives it. A failure surfaces at the unit's next wait
 * and fails the unit, as it would have where it happened.
 */
const POSTED: Partial<
  Record<keyof PgRepositories | 'nodes', Record<string, (args: unknown[]) => unknown>>
> = {
  // The inserted record is the one given (pg-call-repository.ts insert).
  calls: { insert: (args) => args[0], patch: () => undefined },
  schedules: { add: () => undefined },
};

/**
 * Transactions through the bridge; nested runs are savepoints, as SQLite's
 * are. BEGIN (with its locks), SAVEPOINT and RELEASE are posted: they go
 * with the unit's next step, and their failures surface there. Each unit
 * has its own transaction id; `runDurable` leaves its commit to the worker
 * and the next unit begins meanwhile, on another connection.
 */
class PgBridgeUnitOfWork implements StoreUnitOfWork {
  private depth = 0;
  /** The running unit's transaction, while `fn` runs. */
  private current: number | undefined;

  constructor(private readonly bridge: StoreBridge) {}

  /** The transaction the repositories' calls belong to now, if any. */
  get tx(): number | undefined {
    return this.current;
  }

  run<T>(fn: () => T, serializeOn: readonly string[] = []): T {
    if (this.current !== undefined) return this.nested(fn, serializeOn);
    for (let attempt = 1; ; attempt++) {
      try {
        return this.attempt(fn, serializeOn, (tx) => this.bridge.call({ op: 'commit', tx }));
      } catch (err) {
        if (attempt >= MAX_ATTEMPTS || !retryable(err)) throw err;
      }
    }
  }

  /** A commit is durable once PostgreSQL has answered it (synchronous_commit). */
  durable(): Promise<void> {
    return Promise.resolve();
  }

  async runDurable<T>(
    fn: () => T,
    serializeOn: readonly string[] = [],
    onRan?: () => void,
  ): Promise<T> {
    if (this.current !== undefined) return this.nested(fn, serializeOn);
    for (let attempt = 1; ; attempt++) {
      try {
        let committed: Promise<void> = Promise.resolve();
        const value = this.attempt(fn, serializeOn, (tx) => {
          committed = this.bridge.commitAsync(tx);
        });
        onRan?.();
        await committed;
        return value;
      } catch (err) {
        if (attempt >= MAX_ATTEMPTS || !retryable(err)) throw err;
      }
    }
  }

  /** BEGIN, `fn`, then `commit`; on a failure, ROLLBACK and rethrow. */
  private attempt<T>(fn: () => T, serializeOn: readonly string[], commit: (tx: number) => void): T {
    const tx = this.bridge.newTransaction();
    this.bridge.post({ op: 'begin', keys: serializeOn, tx });
    this.current = tx;
    this.depth = 1;
    try {
      const value = fn();
      if (isPromise(value)) throw new Error('a unit of work runs synchronously');
      this.current = undefined;
      commit(tx);
      return value;
    } catch (err) {
      try {
        this.bridge.call({ op: 'rollback', tx });
      } catch {
        // the transaction is gone with its connection: nothing to undo
      }
      throw err;
    } finally {
      this.current = undefined;
      this.depth = 0;
    }
  }

  private nested<T>(fn: () => T, serializeOn: readonly string[]): T {
    const tx = this.current!;
    const name = `uow_${this.depth}`;
    if (serializeOn.length > 0) this.bridge.post({ op: 'lock', keys: serializeOn, tx });
    this.bridge.post({ op: 'savepoint', name, tx });
    this.depth++;
    try {
      const value = fn();
      this.bridge.post({ op: 'release', name, tx });
      return value;
    } catch (err) {
      try {
        this.bridge.call({ op: 'rollbackTo', name, tx });
      } catch {
        // the savepoint never was (its transaction had failed): the unit fails with `err`
      }
      throw err;
    } finally {
      this.depth--;
    }
  }
}

/** A deadlock or serialization failure: the unit runs again from the start. */
function retryable(err: unknown): boolean {
  const code = err instanceof StoreError ? err.code : undefined;
  return code !== undefined && RETRYABLE.has(code);
}

function isPromise(v: unknown): boolean {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** An API key's hash crosses the thread as a Uint8Array; callers compare Buffers. */
function reviveKeyHash(v: unknown): unknown {
  const fix = (k: unknown) => {
    const key = k as { keyHash?: Uint8Array } | undefined;
    if (key?.keyHash && !Buffer.isBuffer(key.keyHash))
      key.keyHash = Buffer.from(key.keyHash.buffer, key.keyHash.byteOffset, key.keyHash.byteLength);
    return k;
  };
  return Array.isArray(v) ? v.map(fix) : fix(v);
}

/**
 * A session's copy of its record (CallUpdateOptions.current) stays on this side:
 * PostgreSQL's update is one statement that reads the row where it is, and
 * the copy would only be cloned to the worker for nothing.
 */
function withoutWritersCopy(method: string, args: unknown[]): unknown[] {
  if (method !== 'update' && method !== 'patch') return args;
  const opts = args[3] as CallUpdateOptions | undefined;
  if (!opts?.current) return args;
  const { current: _kept, ...rest } = opts;
  return [args[0], args[1], args[2], rest];
}
