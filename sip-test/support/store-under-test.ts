// Both stores behind one face, for repository contract suites (issue 27):
// a SQLite file store answered through promises, and a migrated database
// on a throw-away PostgreSQL server. Each suite seeds what it needs.
import type pg from 'pg';
import { openDatabase, type Db } from '../../src/store/database.js';
import { migratePg } from '../../src/store/pg/pg-migrations.js';
import { afterAll, beforeAll } from 'vitest';
import { startPostgres, TestPools, type PostgresServer } from './postgres.js';

/** A synchronous repository answered through promises, as a server store answers. */
export function promised<T extends object>(
  repo: T,
): { [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => Promise<R> : T[K] } {
  return new Proxy(repo, {
    get: (target, key) => {
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function'
        ? // async: a throw becomes a rejection, as a server store's would
          async (...args: unknown[]) => (v as (...a: unknown[]) => unknown).apply(target, args)
        : v;
    },
  }) as never;
}

/** A fresh in-memory SQLite database at the current schema. */
export function sqliteDatabase(): Db {
  return openDatabase(':memory:');
}

let databases = 0;

/**
 * A fresh migrated database on `server` and a pool on it. Its default
 * collation is ICU en-US, as on many production servers (the test server's
 * own default is C.UTF-8): the byte-wise order the lists promise must not
 * come from the locale.
 */
export async function postgresDatabase(
  server: PostgresServer,
  pools: TestPools,
  max = 8,
): Promise<{ url: string; pool: pg.Pool }> {
  const name = `contract_${process.pid}_${++databases}`;
  await pools
    .open(server.url, 1)
    .query(
      `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`,
    );
  const url = server.url.replace(/\/postgres$/, `/${name}`);
  const pool = pools.open(url, max);
  await migratePg(pool);
  return { url, pool };
}

/** A repository under test on one store, with companies to own what it keeps. */
export interface SeededStore<R> {
  repo: R;
  /** Creates these companies. */
  seed(companyIds: string[]): Promise<void>;
  close(): Promise<void>;
}

/** `make`'s repository on a fresh SQLite database. */
export function sqliteSeeded<R>(make: (db: Db) => R): SeededStore<R> {
  const db = sqliteDatabase();
  const insert = db.prepare(`INSERT INTO companies (id, name, created_at) VALUES (?, ?, 'x')`);
  return {
    repo: make(db),
    seed: async (ids) => {
      for (const id of ids) insert.run(id, id);
    },
    close: async () => {
      db.close();
    },
  };
}

/** `make`'s repository on a fresh PostgreSQL database of `server`. */
export async function postgresSeeded<R>(
  server: PostgresServer,
  pools: TestPools,
  make: (pool: pg.Pool) => R,
): Promise<SeededStore<R>> {
  const { pool } = await postgresDatabase(server, pools, 4);
  return {
    repo: make(pool),
    seed: async (ids) => {
      for (const id of ids)
        await pool.query(`INSERT INTO companies (id, name, created_at) VALUES ($1, $1, 'x')`, [id]);
    },
    close: async () => undefined,
  };
}

/** This test file's throw-away PostgreSQL server (started beforeAll, stopped afterAll) and its pools. */
export function usePostgresServer(): { readonly server: PostgresServer; pools: TestPools } {
  const pools = new TestPools();
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres({ fsync: false });
  }, 60_000);
  afterAll(async () => {
    await pools.end();
    await server?.stop();
  });
  return {
    get server(): PostgresServer {
      if (!server) throw new Error('the PostgreSQL server is not started (beforeAll)');
      return server;
    },
    pools,
  };
}

/**
 * Calls through a promise, so a refusal is a rejection whether the store
 * throws at the call (a synchronous SQLite error) or rejects (a server's).
 */
export const later = <T>(f: () => Promise<T>): Promise<T> => Promise.resolve().then(f);
