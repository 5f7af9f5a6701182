// The serialized unit of work on a real PostgreSQL: without the number's
// lock two admissions both see "no call yet" and both insert; with it the
// second waits for the first and refuses. Then three daemons (three pools)
// admitting 600 concurrent requests for 100 numbers with a limit of 2 calls
// per number: exactly 2 accepted for each, never more. Keys named in
// opposite orders never deadlock.
import type pg from 'pg';
import { usePostgresServer } from '../support/store-under-test.js';
import { describe, expect, it } from 'vitest';
import { migratePg } from '../../src/store/pg/pg-migrations.js';
import { numberKey, PgUnitOfWork } from '../../src/store/pg/pg-unit-of-work.js';

const pgServer = usePostgresServer();
const { pools } = pgServer;
let dbs = 0;

async function database(): Promise<string> {
  const url = await pgServer.server.createDatabase(`uow_${++dbs}`);
  const p = pools.open(url, 2);
  await migratePg(p);
  await p.query(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`);
  return url;
}

let seq = 0;
/** Admits a call to `number` when fewer than `limit` exist: count, then insert. */
async function admit(tx: pg.PoolClient, number: string, limit: number, pause?: Promise<void>) {
  const { rows } = await tx.query<{ n: string }>(
    `SELECT count(*) AS n FROM calls WHERE company_id = 'co' AND phone_number = $1`,
    [number],
  );
  if (pause) await pause;
  if (Number(rows[0]!.n) >= limit) return false;
  const id = `r${process.pid}-${++seq}`;
  await tx.query(
    `INSERT INTO calls (id, call_id, company_id, phone_number, status, created_at, modified_at, data)
     VALUES ($1, $1, 'co', $2, 'trying', 'x', 'x', '{}')`,
    [id, number],
  );
  return true;
}

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
};

describe('PgUnitOfWork', () => {
  it("two admissions for one number: without the number's lock both insert; with it the second waits and refuses", async () => {
    const url = await database();
    const uow = new PgUnitOfWork(pools.open(url, 4));
    const race = async (keys: string[], number: string) => {
      const g = gate();
      let counted!: () => void;
      const firstCounted = new Promise<void>((r) => (counted = r));
      const first = uow.run(keys, async (tx) => {
        const p = admit(tx, number, 1, g.opened);
        counted();
        return p;
      });
      await firstCounted;
      await new Promise((r) => setTimeout(r, 50));
      const second = uow.run(keys, (tx) => admit(tx, number, 1));
      await new Promise((r) => setTimeout(r, 200));
      g.open();
      return Promise.all([first, second]);
    };
    expect(await race([], '+12125550001')).toEqual([true, true]);
    expect(await race([numberKey('co', '+12125550002')], '+12125550002')).toEqual([true, false]);
  });

  it('three daemons, 600 concurrent admissions for 100 numbers, limit 2: exactly 2 calls per number', async () => {
    const url = await database();
    const daemons = [1, 2, 3].map(() => new PgUnitOfWork(pools.open(url, 8)));
    const numbers = Array.from({ length: 100 }, (_, i) => `+1212556${String(i).padStart(4, '0')}`);
    const results = await Promise.all(
      Array.from({ length: 600 }, (_, i) => {
        const number = numbers[i % 100]!;
        return daemons[i % 3]!.run([numberKey('co', number)], (tx) => admit(tx, number, 2));
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(200);
    const { rows } = await pools
      .open(url, 1)
      .query<{ phone_number: string; n: string }>(
        `SELECT phone_number, count(*) AS n FROM calls GROUP BY phone_number`,
      );
    expect(rows).toHaveLength(100);
    expect(rows.every((r) => Number(r.n) === 2)).toBe(true);
  }, 60_000);

  it('keys named in opposite orders (a number and its alternate) never deadlock', async () => {
    const url = await database();
    const uow = new PgUnitOfWork(pools.open(url, 10));
    const a = numberKey('co', '+12125550010');
    const b = numberKey('co', '+12125550011');
    const runs = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        uow.run(i % 2 ? [a, b] : [b, a], async (tx) => {
          await tx.query('SELECT pg_sleep(0.001)');
          return i;
        }),
      ),
    );
    expect(runs).toHaveLength(100);
  }, 60_000);

  it("takes BEGIN and every key's lock in one round trip; a key with quotes and backslashes is the same lock as a parameter's", async () => {
    const url = await database();
    const pool = pools.open(url, 3);
    const uow = new PgUnitOfWork(pool);
    const odd = "number:co:it's\\a'); SELECT 1; --";
    const g = gate();
    const locked = gate();
    const held = uow.run([odd, numberKey('co', '+12125550030')], async (tx) => {
      const { rows } = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
      );
      locked.open();
      await g.opened;
      return rows[0]!.n;
    });
    await locked.opened;
    // Another session asking for the same key by parameter waits until the holder commits.
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      const waiting = other.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [odd]);
      const first = await Promise.race([
        waiting.then(() => 'got the lock'),
        new Promise((r) => setTimeout(() => r('waited'), 300)),
      ]);
      expect(first).toBe('waited');
      g.open();
      expect(await held).toBe(2);
      await waiting;
      await other.query('COMMIT');
    } finally {
      other.release();
    }
  });

  it('rolls back what a failing transaction wrote', async () => {
    const url = await database();
    const pool = pools.open(url, 2);
    const uow = new PgUnitOfWork(pool);
    await expect(
      uow.run([numberKey('co', '+12125550020')], async (tx) => {
        await admit(tx, '+12125550020', 5);
        throw new Error('protections failed');
      }),
    ).rejects.toThrow('protections failed');
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM calls`);
    expect(rows[0].n).toBe(0);
  });
});
