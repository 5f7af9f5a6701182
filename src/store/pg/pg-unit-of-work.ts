// One transaction on PostgreSQL, serialized per key (issue 27 item 2;
// docs/decisions/multi-node-store.md rule 2): before running, it takes a
// transaction-scoped advisory lock for each key, in sorted order so that
// two transactions naming the same keys cannot deadlock. A second
// transaction on any daemon naming one of those keys waits until the first
// commits, then sees its writes (READ COMMITTED reads at each statement).
import type pg from 'pg';

/** SQLSTATEs after which the whole transaction is run again. */
export const RETRYABLE: ReadonlySet<string> = new Set(['40P01', '40001']); // deadlock_detected, serialization_failure

type Locker = Pick<pg.PoolClient, 'query' | 'escapeLiteral'>;

/** Takes each key's transaction-scoped advisory lock, in sorted order (no deadlock between two takers). */
export async function lockKeys(tx: Locker, keys: readonly string[]): Promise<void> {
  const locks = lockStatements(tx, keys);
  if (locks) await tx.query(locks);
}

/**
 * BEGIN and the keys' locks in one round trip: one simple query of several
 * statements, run in order (the keys as escaped literals; a simple query
 * takes no parameters).
 */
export async function beginLocked(tx: Locker, keys: readonly string[]): Promise<void> {
  await tx.query(`BEGIN;${lockStatements(tx, keys)}`);
}

function lockStatements(tx: Locker, keys: readonly string[]): string {
  return [...new Set(keys)]
    .sort()
    .map((key) => `SELECT pg_advisory_xact_lock(hashtextextended(${tx.escapeLiteral(key)}, 0));`)
    .join('');
}

export { companyKey, numberKey } from '../../model/serialization-keys.js';

export class PgUnitOfWork {
  constructor(
    private readonly pool: pg.Pool,
    private readonly maxAttempts = 3,
  ) {}

  /**
   * Runs `fn` in one transaction holding the advisory lock of every key;
   * commits what it wrote, or rolls back when it throws. A deadlock or
   * serialization failure reported by PostgreSQL runs it again, at most
   * `maxAttempts` times in all.
   */
  async run<T>(keys: readonly string[], fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      try {
        await beginLocked(client, keys);
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (err as { code?: string }).code;
        if (attempt >= this.maxAttempts || !code || !RETRYABLE.has(code)) throw err;
      } finally {
        client.release();
      }
    }
  }
}
