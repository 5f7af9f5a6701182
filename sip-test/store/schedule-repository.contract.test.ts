// The schedule repository's contract, once per store: SQLite (the embedded
// default) and PostgreSQL (a throw-away server). Then what only a server
// store faces: three daemons claiming the same 300 due rows at once, each
// row claimed by exactly one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { ScheduleRepository } from '../../src/calls/ports/call-store.js';
import type { NewSchedule } from '../../src/model/schedule.js';
import { PgScheduleRepository } from '../../src/store/pg/pg-schedule-repository.js';
import { SqliteScheduleRepository } from '../../src/store/schedule-repository.js';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
} from '../support/store-under-test.js';

type Repo = Async<ScheduleRepository> & { nextDueAt(): Promise<number | undefined> };

interface StoreUnderTest {
  repo: Repo;
  /** A company and call records r1..rN the rows may point at. */
  seed(records: number): Promise<void>;
  close(): Promise<void>;
}

/** The SQLite repository, answered through promises like a server store. */
function sqliteStore(): StoreUnderTest {
  const db = sqliteDatabase();
  return {
    repo: promised(new SqliteScheduleRepository(db)),
    seed: async (n) => {
      db.prepare(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`).run();
      const insert = db.prepare(`INSERT INTO calls (id, call_id, company_id, phone_number, status,
        created_at, modified_at, data) VALUES (?, ?, 'co', ?, 'scheduled', 'x', 'x', '{}')`);
      for (let i = 1; i <= n; i++)
        insert.run(`r${i}`, `c${i}`, `+1212555${String(i).padStart(4, '0')}`);
    },
    close: async () => {
      db.close();
    },
  };
}

const postgres = usePostgresServer();
const { pools } = postgres;
const pgPool = async (url: string) => pools.open(url);

async function postgresStore(): Promise<StoreUnderTest & { url: string }> {
  const { url, pool } = await postgresDatabase(postgres.server, pools);
  return {
    url,
    repo: new PgScheduleRepository(pool),
    seed: async (n) => {
      await pool.query(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`);
      await pool.query(
        `INSERT INTO calls (id, call_id, company_id, phone_number, status, created_at, modified_at, data)
         SELECT 'r' || i, 'c' || i, 'co', '+1212555' || lpad(i::text, 4, '0'), 'scheduled', 'x', 'x', '{}'
         FROM generate_series(1, $1::int) AS i`,
        [n],
      );
    },
    close: async () => undefined,
  };
}

const row = (i: number, dueAt: number, extra: Partial<NewSchedule> = {}): NewSchedule => ({
  callRecordId: `r${i}`,
  companyId: 'co',
  dueAt,
  kind: 'initial',
  attempt: 1,
  idempotencyKey: `r${i}:1`,
  ...extra,
});

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('schedule repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeAll(async () => {
    s = await make();
    await s.seed(10);
  }, 30_000);
  afterAll(async () => {
    await s?.close();
  });

  it('inserts once per idempotency key', async () => {
    const first = await s.repo.insert(row(1, 1000), 'a');
    expect(first).toMatchObject({ callRecordId: 'r1', state: 'pending', dueAt: 1000, claims: 0 });
    expect(await s.repo.insert(row(1, 5000), 'b')).toBeUndefined();
    expect(await s.repo.forCall('r1')).toHaveLength(1);
  });

  it('claims due rows only, earliest first, up to the limit, under a lease', async () => {
    await s.repo.insert(row(2, 2000), 'a');
    await s.repo.insert(row(3, 3000), 'a');
    await s.repo.insert(row(4, 9000), 'a');
    expect(await s.repo.nextDueAt()).toBe(1000);
    const claimed = await s.repo.claimDue('node-a', 3500, 1000, 2, 'c');
    expect(
      claimed.map((r) => [r.callRecordId, r.state, r.leaseOwner, r.leaseUntil, r.claims]),
    ).toEqual([
      ['r1', 'claimed', 'node-a', 4500, 1],
      ['r2', 'claimed', 'node-a', 4500, 1],
    ]);
    expect(
      (await s.repo.claimDue('node-b', 3500, 1000, 10, 'c')).map((r) => r.callRecordId),
    ).toEqual(['r3']);
  });

  it('dispatch needs the unexpired lease of its owner; a dispatched row is never claimed again', async () => {
    const [r1] = await s.repo.openForCall('r1');
    expect(await s.repo.markDispatched(r1!.id, 'node-b', 4000, 'd')).toBe(false);
    expect(await s.repo.markDispatched(r1!.id, 'node-a', 4000, 'd')).toBe(true);
    // Long after every lease ran out, only the undispatched claims come back.
    const again = await s.repo.claimDue('node-c', 60_000, 1000, 10, 'e');
    expect(again.map((r) => [r.callRecordId, r.claims])).toEqual([
      ['r2', 2],
      ['r3', 2],
      ['r4', 1],
    ]);
    const [r2] = await s.repo.openForCall('r2');
    expect(await s.repo.markDispatched(r2!.id, 'node-a', 60_001, 'e')).toBe(false);
  });

  it('release, finish, rearm, cancel and stale dispatches follow the states', async () => {
    const [r2] = await s.repo.openForCall('r2');
    expect(await s.repo.release(r2!.id, 'node-c', 70_000, 'moved', 'f')).toBe(true);
    expect((await s.repo.openForCall('r2'))[0]).toMatchObject({ state: 'pending', dueAt: 70_000 });
    const [r1] = await s.repo.openForCall('r1');
    expect(await s.repo.staleDispatched('e')).toEqual([expect.objectContaining({ id: r1!.id })]);
    expect(await s.repo.rearm(r1!.id, 80_000, 'never sent', 'g')).toBe(true);
    expect(await s.repo.finish(r1!.id, 'done', 'answered', 'h')).toBe(true);
    expect(await s.repo.finish(r1!.id, 'done', 'again', 'h')).toBe(false);
    expect(await s.repo.cancelForCall('r2', 'hung up', 'i')).toBe(1);
    expect(await s.repo.openForCall('r2')).toEqual([]);
  });
});

describe('PostgreSQL: three daemons claiming at once', () => {
  it('300 rows due at the same instant: each claimed by exactly one daemon, spread over them', async () => {
    const store = await postgresStore();
    await store.seed(300);
    for (let i = 1; i <= 300; i++) await store.repo.insert(row(i, 1000), 'a');
    // Three daemons, each with its own pool, claiming 10 at a time until nothing is left.
    const daemons = await Promise.all(
      ['node-1', 'node-2', 'node-3'].map(async (node) => ({
        node,
        repo: new PgScheduleRepository(await pgPool(store.url)),
      })),
    );
    const claimedBy = new Map<string, string[]>();
    await Promise.all(
      daemons.map(async ({ node, repo }) => {
        for (;;) {
          const rows = await repo.claimDue(node, 2000, 60_000, 10, 'b');
          if (rows.length === 0) return;
          for (const r of rows) {
            (
              claimedBy.get(r.callRecordId) ??
              claimedBy.set(r.callRecordId, []).get(r.callRecordId)!
            ).push(node);
            expect(await repo.markDispatched(r.id, node, 2001, 'c')).toBe(true);
          }
        }
      }),
    );
    expect(claimedBy.size).toBe(300);
    expect([...claimedBy.values()].every((nodes) => nodes.length === 1)).toBe(true);
    const perNode = daemons.map(
      ({ node }) => [...claimedBy.values()].filter((n) => n[0] === node).length,
    );
    expect(perNode.reduce((a, b) => a + b, 0)).toBe(300);
    expect(perNode.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
