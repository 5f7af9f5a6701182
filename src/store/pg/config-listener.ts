// Hears other daemons' configuration changes (config-generations.ts): one
// connection of the store worker LISTENs on gateway_config (the triggers of
// PG migration 4 NOTIFY there) and bumps the changed table's counter. While
// the connection is down nothing cached is used; it reconnects every
// `retryMs`, and everything cached before is dropped once it listens again
// (notifications sent while it was away are lost).
import pg from 'pg';
import { isConfigTable, type ConfigGenerations } from './config-generations.js';

export interface ConfigListenerOptions {
  url: string;
  generations: ConfigGenerations;
  retryMs: number;
  setTimer: (fn: () => void, ms: number) => { unref(): void };
  applicationName: string;
}

export interface ConfigListener {
  close(): Promise<void>;
}

export function listenForConfigChanges(opts: ConfigListenerOptions): ConfigListener {
  let client: pg.Client | undefined;
  let closed = false;

  const down = (c: pg.Client) => {
    opts.generations.setListening(false);
    if (client !== c) return;
    client = undefined;
    void c.end().catch(() => undefined);
    if (!closed) opts.setTimer(connect, opts.retryMs).unref();
  };

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({ connectionString: opts.url, application_name: opts.applicationName });
    client = c;
    c.on('error', () => down(c));
    c.on('end', () => down(c));
    c.on('notification', (n) => {
      if (n.payload && isConfigTable(n.payload)) opts.generations.bump(n.payload);
      else opts.generations.bumpAll();
    });
    try {
      await c.connect();
      await c.query('LISTEN gateway_config');
      if (client === c && !closed) opts.generations.setListening(true);
    } catch {
      down(c);
    }
  }

  void connect();
  return {
    async close() {
      closed = true;
      opts.generations.setListening(false);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
