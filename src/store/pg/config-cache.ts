// The configuration a request reads, kept in the main thread between
// changes (docs/decisions/multi-node-store.md "Configuration a daemon
// caches"): API keys, companies, plans and documents are read on every
// request and change rarely, and each read is a round trip the main thread
// waits for. An answer is kept with its table's counter as it was before
// the read (config-generations.ts) and used while that counter holds, only
// outside a unit of work (inside one, reads go to the transaction), and only
// while other daemons' changes are heard. Callers get their own copy.
import type { ConfigGenerations, ConfigTable } from './config-generations.js';

/** Bound on the entries kept (all are dropped when it is reached). */
const MAX_ENTRIES = 20_000;

export class ConfigCache {
  private readonly entries = new Map<string, { generation: number; value: unknown }>();

  constructor(private readonly generations: ConfigGenerations) {}

  /** `load()`'s answer for `key`, from the cache while `table` has not changed. */
  read(table: ConfigTable, key: string, load: () => unknown): unknown {
    if (!this.generations.listening) return load();
    const generation = this.generations.of(table);
    const hit = this.entries.get(key);
    if (hit?.generation === generation) return structuredClone(hit.value);
    const value = load();
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { generation, value: structuredClone(value) });
    return value;
  }

  /** After this daemon changed `tables`: what it reads next is read again. */
  changed(tables: readonly ConfigTable[]): void {
    for (const t of tables) this.generations.bump(t);
  }
}

/** The cache key of a read: repository, method and arguments (a Buffer by its bytes). */
export function readKey(repo: string, method: string, args: readonly unknown[]): string {
  const plain = args.map((a) => (Buffer.isBuffer(a) ? { bytes: a.toString('hex') } : a));
  return `${repo}.${method}${JSON.stringify(plain)}`;
}

interface RepoPolicy {
  /** Reads answered from the cache, with the table each reads. */
  cached: Readonly<Record<string, ConfigTable>>;
  /** Writes, with the tables they change. */
  writes: Readonly<Record<string, readonly ConfigTable[]>>;
  /** Reads that always go to the database (lists for the API, counts). */
  uncached: readonly string[];
}

const documents: RepoPolicy = {
  cached: { get: 'documents', getById: 'documents', list: 'documents' },
  writes: { insert: ['documents'], update: ['documents'], remove: ['documents'] },
  uncached: ['listAll'],
};

/** Every method of the configuration repositories, classified (a test holds it complete). */
export const CONFIG_REPOS: Readonly<Record<string, RepoPolicy>> = {
  companies: {
    cached: { get: 'companies', getPlan: 'plans' },
    writes: {
      insert: ['companies'],
      updateSettings: ['companies'],
      savePlan: ['plans'],
      charge: ['plans'],
    },
    uncached: ['subsidiaries', 'all', 'count'],
  },
  apiKeys: {
    cached: { findByHash: 'api_keys' },
    writes: {
      insert: ['api_keys'],
      update: ['api_keys'],
      touch: ['api_keys'],
      remove: ['api_keys'],
    },
    uncached: ['get', 'list'],
  },
  agents: documents,
  sipTrunks: documents,
  voipPhones: documents,
  outboundRoutes: documents,
};
