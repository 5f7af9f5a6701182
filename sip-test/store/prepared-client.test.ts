// The store worker's PostgreSQL client (issue 27): parameterised queries run
// as named prepared statements, one per text and connection; the rest stays
// simple queries (BEGIN, COMMIT, several statements in one string).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PreparedClient, statementName } from '../../src/store/pg/prepared-client.js';
import { usePostgresServer } from '../support/store-under-test.js';

const postgres = usePostgresServer();
let pool: pg.Pool | undefined;

/** A pool of PreparedClients whose connections' errors at the server's shutdown are nobody's. */
function preparedPool(url: string): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 1, Client: PreparedClient });
  p.on('error', () => undefined);
  p.on('connect', (client) => client.on('error', () => undefined));
  return p;
}
afterEach(async () => {
  await pool?.end();
  pool = undefined;
});

async function preparedOnThisConnection(client: pg.PoolClient): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    'SELECT name FROM pg_prepared_statements ORDER BY name',
  );
  return rows.map((r) => r.name);
}

describe('PreparedClient', () => {
  it('prepares a parameterised text once per connection and reuses it', async () => {
    const url = await postgres.server.createDatabase('prepared_reuse');
    pool = preparedPool(url);
    const text = 'SELECT $1::int + 1 AS n';
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push((await pool.query<{ n: number }>(text, [i])).rows[0]!.n);
    expect(answers).toEqual([1, 2, 3]);
    const client = await pool.connect();
    try {
      // The catalogue query has no parameters: a simple query, not prepared.
      expect(await preparedOnThisConnection(client)).toEqual([statementName(text)]);
    } finally {
      client.release();
    }
  });

  it('keeps a query without parameters simple: transactions and several statements in one string', async () => {
    const url = await postgres.server.createDatabase('prepared_simple');
    pool = preparedPool(url);
    const client = await pool.connect();
    try {
      await client.query('CREATE TABLE t (v int)');
      await client.query('BEGIN');
      await client.query('INSERT INTO t VALUES ($1)', [7]);
      await client.query('SET LOCAL synchronous_commit = off; COMMIT');
      expect((await client.query('SELECT v FROM t')).rows).toEqual([{ v: 7 }]);
      expect(await preparedOnThisConnection(client)).toEqual([
        statementName('INSERT INTO t VALUES ($1)'),
      ]);
    } finally {
      client.release();
    }
  });

  it('names a text by its content: the same text the same name, another text another', () => {
    expect(statementName('SELECT $1')).toBe(statementName('SELECT $1'));
    expect(statementName('SELECT $1')).not.toBe(statementName('SELECT $2'));
    expect(statementName('SELECT $1')).toMatch(/^s_[0-9a-f]{24}$/);
  });
});
