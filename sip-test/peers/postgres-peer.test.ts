// The throw-away PostgreSQL server: starts on a free loopback port, answers
// SQL, serializes two sessions on one advisory lock (what the multi-node
// store relies on), and leaves nothing behind.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PostgresServer } from '../support/postgres.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres({ fsync: false });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

describe('throw-away PostgreSQL', () => {
  it('answers on 127.0.0.1 as the gateway superuser, in a database of its own', async () => {
    const url = await server.createDatabase('peer_test');
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const r = await c.query<{ v: string; db: string; addr: string }>(
      'SELECT current_setting($1) AS v, current_database() AS db, host(inet_server_addr()) AS addr',
      ['server_version_num'],
    );
    await c.end();
    expect(Number(r.rows[0]!.v)).toBeGreaterThanOrEqual(150000);
    expect(r.rows[0]).toMatchObject({ db: 'peer_test', addr: '127.0.0.1' });
  });

  it('pg_advisory_xact_lock serializes two sessions on the same key until the first commits', async () => {
    const a = new pg.Client({ connectionString: server.url });
    const b = new pg.Client({ connectionString: server.url });
    await a.connect();
    await b.connect();
    try {
      await a.query('BEGIN');
      await a.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', ['co:+12125550100']);
      await b.query('BEGIN');
      let bGot = false;
      const bLock = b
        .query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', ['co:+12125550100'])
        .then(() => (bGot = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(bGot).toBe(false);
      await a.query('COMMIT');
      await bLock;
      expect(bGot).toBe(true);
      await b.query('COMMIT');
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('stop() ends the server and removes its directory', async () => {
    const other = await startPostgres({ fsync: false });
    expect(existsSync(other.dir)).toBe(true);
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
    expect(existsSync(other.dir)).toBe(false);
  }, 60_000);
});
