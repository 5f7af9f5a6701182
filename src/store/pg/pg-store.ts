// The daemon's store on PostgreSQL (issue 27): the same Store as SQLite's,
// answered through the store worker (store-bridge.ts). Each repository is a
// facade whose methods are the worker's repository methods; the unit of
// work opens a transaction in the worker, takes the advisory lock of each
// key it serializes on (rule 2), runs `fn`, and commits. A deadlock or
// serialization failure runs `fn` again from the start, at most three times.
import type { Store, StoreUnitOfWork } from '../store.js';
import type { PgNodeRegistry } from './pg-node-registry.js';
import type { PgRepositories } from './pg-repositories.js';
import { RETRYABLE } from './pg-unit-of-work.js';
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
}

/** Opens the store: starts the worker and brings the schema up to date. */
export function openPgStore(opts: PgStoreOptions): PgStore {
  const bridge = new StoreBridge(opts);
  bridge.call({ op: 'migrate' });
  const repo = <K extends keyof PgRepositories | 'nodes'>(
    name: K,
    revive?: (v: unknown) => unknown,
  ) =>
    new Proxy(
      {},
      {
        get: (_target, method) =>
          typeof method !== 'string'
            ? undefined
            : (...args: unknown[]) => {
                const value = bridge.call({ op: 'call', repo: name, method, args });
                return revive ? revive(value) : value;
              },
      },
    ) as never;

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
    unitOfWork: new PgBridgeUnitOfWork(bridge),
    companies: repo('companies'),
    apiKeys: repo('apiKeys', reviveKeyHash),
    agents: repo('agents'),
    sipTrunks: repo('sipTrunks'),
    voipPhones: repo('voipPhones'),
    outboundRoutes: repo('outboundRoutes'),
    calls: repo('calls'),
    optOuts: repo('optOuts'),
    schedules: repo('schedules'),
    callHistory: repo('callHistory'),
    dialogs: repo('dialogs'),
    webhooks,
    nodes: repo('nodes'),
    close: () => bridge.close(),
  };
}

/** Transactions through the bridge; nested runs are savepoints, as SQLite's are. */
class PgBridgeUnitOfWork implements StoreUnitOfWork {
  private depth = 0;

  constructor(private readonly bridge: StoreBridge) {}

  run<T>(fn: () => T, serializeOn: readonly string[] = []): T {
    if (this.depth > 0) return this.nested(fn, serializeOn);
    for (let attempt = 1; ; attempt++) {
      this.bridge.call({ op: 'begin', keys: serializeOn });
      this.depth = 1;
      try {
        const value = fn();
        if (isPromise(value)) throw new Error('a unit of work runs synchronously');
        this.bridge.call({ op: 'commit' });
        return value;
      } catch (err) {
        try {
          this.bridge.call({ op: 'rollback' });
        } catch {
          // the transaction is gone with its connection: nothing to undo
        }
        const code = err instanceof StoreError ? err.code : undefined;
        if (attempt >= MAX_ATTEMPTS || !code || !RETRYABLE.has(code)) throw err;
      } finally {
        this.depth = 0;
      }
    }
  }

  private nested<T>(fn: () => T, serializeOn: readonly string[]): T {
    const name = `uow_${this.depth}`;
    if (serializeOn.length > 0) this.bridge.call({ op: 'lock', keys: serializeOn });
    this.bridge.call({ op: 'savepoint', name });
    this.depth++;
    try {
      const value = fn();
      this.bridge.call({ op: 'release', name });
      return value;
    } catch (err) {
      this.bridge.call({ op: 'rollbackTo', name });
      throw err;
    } finally {
      this.depth--;
    }
  }
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
