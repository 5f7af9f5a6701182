// The PostgreSQL schema against a real server: migrations run once even when
// three daemons start together, the tables and columns are SQLite's (so a
// SQLite migration without its PostgreSQL counterpart fails here), the
// call_numbers trigger keeps alternates, and a newer database is refused.
import type pg from 'pg';
import { usePostgresServer } from '../support/store-under-test.js';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { migratePg, PG_SCHEMA_VERSION } from '../../src/store/pg/pg-migrations.js';

const pgServer = usePostgresServer();
const { pools } = pgServer;
const pool = (url: string) => pools.open(url, 4);

/** table → sorted column names. */
type Shape = Record<string, string[]>;

function sqliteShape(): Shape {
  const db = openDatabase(':memory:');
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all() as Array<{ name: string }>;
  const shape: Shape = {};
  for (const { name } of tables)
    shape[name] = (db.pragma(`table_info(${name})`) as Array<{ name: string }>)
      .map((c) => c.name)
      .sort();
  db.close();
  return shape;
}

async function pgShape(p: pg.Pool): Promise<Shape> {
  const { rows } = await p.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`,
  );
  const shape: Shape = {};
  for (const r of rows) (shape[r.table_name] ??= []).push(r.column_name);
  for (const t of Object.keys(shape)) shape[t]!.sort();
  return shape;
}

describe('PostgreSQL schema', () => {
  it('three daemons migrating at once: each migration runs once, all end at the same version', async () => {
    const url = await pgServer.server.createDatabase('concurrent');
    const versions = await Promise.all([pool(url), pool(url), pool(url)].map((p) => migratePg(p)));
    expect(versions).toEqual([PG_SCHEMA_VERSION, PG_SCHEMA_VERSION, PG_SCHEMA_VERSION]);
    const { rows } = await pool(url).query(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual(
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
    );
  });

  it("has SQLite's tables and columns, one for one", async () => {
    const p = pool(await pgServer.server.createDatabase('parity'));
    await migratePg(p);
    expect(await pgShape(p)).toEqual(sqliteShape());
  });

  it('keeps call_numbers by trigger: the number and its alternates on insert, a changed number on update', async () => {
    const p = pool(await pgServer.server.createDatabase('triggers'));
    await migratePg(p);
    await p.query(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'now')`);
    await p.query(
      `INSERT INTO calls (id, call_id, company_id, phone_number, status, created_at, modified_at, data)
       VALUES ('r1', 'c1', 'co', '+12125550100', 'scheduled', 'now', 'now', $1)`,
      [JSON.stringify({ additionalPhoneNumbers: ['+12125550101', 7, '+12125550102'] })],
    );
    await p.query(`UPDATE calls SET phone_number = '+12125550103' WHERE id = 'r1'`);
    const { rows } = await p.query(
      `SELECT phone_number FROM call_numbers WHERE call_record_id = 'r1' ORDER BY phone_number`,
    );
    expect(rows.map((r) => r.phone_number)).toEqual([
      '+12125550100',
      '+12125550101',
      '+12125550102',
      '+12125550103',
    ]);
  });

  it('refuses a database newer than this build', async () => {
    const p = pool(await pgServer.server.createDatabase('newer'));
    await migratePg(p);
    await p.query('INSERT INTO schema_migrations (version) VALUES (999)');
    await expect(migratePg(p)).rejects.toThrow(/schema version 999 is newer/);
  });
});

describe('PostgreSQL schema: byte-wise text', () => {
  it('every text column is COLLATE "C", so the repositories’ ordered and ranged queries can use the indexes', async () => {
    const url = await pgServer.server.createDatabase('bytewise');
    const p = pool(url);
    await migratePg(p);
    const { rows } = await p.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'text' AND table_name <> 'schema_migrations'
         AND coalesce(collation_name, '') <> 'C'`,
    );
    expect(rows[0]!.n).toBe(0);
    const client = await p.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const plan = await client.query(
        `EXPLAIN SELECT * FROM calls WHERE company_id = 'co'
         ORDER BY created_at COLLATE "C" DESC, id COLLATE "C" LIMIT 20`,
      );
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('calls_company_created');
    } finally {
      client.release();
    }
  });
});
