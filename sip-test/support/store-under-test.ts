// Both stores behind one face, for repository contract suites (issue 27):
// a SQLite file store answered through promises, and a migrated database
// on a throw-away PostgreSQL server. Each suite seeds what it needs.
import type pg from 'pg';
import { openDatabase, type Db } from '../../src/store/database.js';
import { migratePg } from '../../src/store/pg/pg-migrations.js';
import type { PostgresServer, TestPools } from './postgres.js';

/** A synchronous repository answered through promises, as a server store answers. */
export function promised<T extends object>(
  repo: T,
): { [K in keyof T]: T[K] extends (...a: infer A) => infer R ? (...a: A) => Promise<R> : T[K] } {
  return new Proxy(repo, {
    get: (target, key) => {
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function'
        ? (...args: unknown[]) =>
            Promise.resolve((v as (...a: unknown[]) => unknown).apply(target, args))
        : v;
    },
  }) as never;
}

/** A fresh in-memory SQLite database at the current schema. */
export function sqliteDatabase(): Db {
  return openDatabase(':memory:');
}

let databases = 0;

/** A fresh database on `server`, migrated, and a pool on it. */
export async function postgresDatabase(
  server: PostgresServer,
  pools: TestPools,
  max = 8,
): Promise<{ url: string; pool: pg.Pool }> {
  const url = await server.createDatabase(`contract_${process.pid}_${++databases}`);
  const pool = pools.open(url, max);
  await migratePg(pool);
  return { url, pool };
}
