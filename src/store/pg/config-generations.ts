// Which cached configuration is current (docs/decisions/multi-node-store.md
// "Configuration a daemon caches"): a counter per table, in memory shared by
// the main thread and the store worker. The worker bumps a table's counter
// when PostgreSQL announces a change to it (config-listener.ts); the main
// thread bumps it after its own writes. An answer cached under an older
// counter is never used.
export const CONFIG_TABLES = [
  'companies',
  'plans',
  'api_keys',
  'documents',
  'webhook_endpoints',
] as const;
export type ConfigTable = (typeof CONFIG_TABLES)[number];

/** [0]: 1 while changes are heard; [1 + i]: CONFIG_TABLES[i]'s counter. */
export class ConfigGenerations {
  private readonly view: Int32Array;

  constructor(
    readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4 * (CONFIG_TABLES.length + 1)),
  ) {
    this.view = new Int32Array(buffer);
  }

  /** Whether other daemons' changes reach this one (the listening connection is up). */
  get listening(): boolean {
    return Atomics.load(this.view, 0) === 1;
  }

  /** While not listening nothing cached is used; on listening again, nothing cached before is. */
  setListening(on: boolean): void {
    if (on) this.bumpAll();
    Atomics.store(this.view, 0, on ? 1 : 0);
  }

  of(table: ConfigTable): number {
    return Atomics.load(this.view, 1 + CONFIG_TABLES.indexOf(table));
  }

  bump(table: ConfigTable): void {
    Atomics.add(this.view, 1 + CONFIG_TABLES.indexOf(table), 1);
  }

  bumpAll(): void {
    for (const t of CONFIG_TABLES) this.bump(t);
  }
}

export function isConfigTable(name: string): name is ConfigTable {
  return (CONFIG_TABLES as readonly string[]).includes(name);
}
