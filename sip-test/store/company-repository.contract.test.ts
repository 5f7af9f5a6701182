// The company repository's contract (companies, subsidiaries, plans and
// their charge), once per store: SQLite (the embedded default) and
// PostgreSQL (a throw-away server). Same answers, same order, same types.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { Company, Plan } from '../../src/model/entities.js';
import { SqliteCompanyRepository } from '../../src/store/company-repository.js';
import { PgCompanyRepository } from '../../src/store/pg/pg-company-repository.js';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
  later,
} from '../support/store-under-test.js';

type Repo = Async<SqliteCompanyRepository>;

interface StoreUnderTest {
  repo: Repo;
  close(): Promise<void>;
}

function sqliteStore(): StoreUnderTest {
  const db = sqliteDatabase();
  return {
    repo: promised(new SqliteCompanyRepository(db)),
    close: async () => {
      db.close();
    },
  };
}

const postgres = usePostgresServer();
const { pools } = postgres;

async function postgresStore(): Promise<StoreUnderTest> {
  const { pool } = await postgresDatabase(postgres.server, pools, 4);
  const repo: Repo = new PgCompanyRepository(pool);
  return { repo, close: async () => undefined };
}

const company = (id: string, extra: Partial<Company> = {}): Company => ({
  id,
  name: `Company ${id}`,
  parentId: null,
  settings: {},
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

const plan = (companyId: string, extra: Partial<Plan> = {}): Plan => ({
  companyId,
  allowOutbound: true,
  credits: 100,
  secondsRemaining: 3600,
  maxChannels: 10,
  maxConcurrentCalls: 5,
  modifiedAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('company repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await make();
  });
  afterEach(async () => {
    await s?.close();
  });

  describe('companies', () => {
    it('insert returns the company; get reads it back exactly, settings included', async () => {
      const c = company('co', {
        settings: {
          antiHarassmentDefault: false,
          testNumbers: ['+12125550100', '+12125550101'],
          callingRules: { default: { days: [1, 2, 3], from: '09:00', to: '20:00' } } as never,
        },
      });
      expect(await s.repo.insert(c)).toBe(c);
      expect(await s.repo.get('co')).toStrictEqual(c);
    });

    it('get of an unknown id is undefined', async () => {
      expect(await s.repo.get('nobody')).toBeUndefined();
    });

    it('refuses a second company with the same id and a parent that does not exist', async () => {
      await s.repo.insert(company('co'));
      await expect(later(() => s.repo.insert(company('co', { name: 'Again' })))).rejects.toThrow();
      await expect(
        later(() => s.repo.insert(company('orphan', { parentId: 'missing' }))),
      ).rejects.toThrow();
      expect(await s.repo.get('co')).toMatchObject({ name: 'Company co' });
      expect(await s.repo.count()).toBe(1);
    });

    it('subsidiaries: direct children only, by createdAt then id byte-wise', async () => {
      await s.repo.insert(company('reseller'));
      await s.repo.insert(company('other'));
      const t1 = '2026-01-02T00:00:00.000Z';
      const t0 = '2026-01-01T12:00:00.000Z';
      // Byte order: 'B' (0x42) < '_' (0x5f) < 'a' (0x61) < 'b'; a locale collation would differ.
      for (const [id, createdAt] of [
        ['b', t1],
        ['a', t1],
        ['_x', t1],
        ['B', t1],
        ['z-first', t0],
      ] as const)
        await s.repo.insert(company(id, { parentId: 'reseller', createdAt }));
      await s.repo.insert(company('grandchild', { parentId: 'a' }));
      await s.repo.insert(company('elsewhere', { parentId: 'other' }));

      expect((await s.repo.subsidiaries('reseller')).map((c) => c.id)).toEqual([
        'z-first',
        'B',
        '_x',
        'a',
        'b',
      ]);
      expect(await s.repo.subsidiaries('a')).toStrictEqual([
        company('grandchild', { parentId: 'a' }),
      ]);
      expect(await s.repo.subsidiaries('grandchild')).toStrictEqual([]);
      expect(await s.repo.subsidiaries('nobody')).toStrictEqual([]);
    });

    it('all and count: every company, by createdAt then id; count is a number', async () => {
      expect(await s.repo.all()).toStrictEqual([]);
      expect(await s.repo.count()).toBe(0);
      await s.repo.insert(company('b', { createdAt: '2026-01-03T00:00:00.000Z' }));
      await s.repo.insert(company('a', { createdAt: '2026-01-03T00:00:00.000Z' }));
      await s.repo.insert(company('C', { createdAt: '2026-01-03T00:00:00.000Z' }));
      await s.repo.insert(company('z', { createdAt: '2026-01-02T00:00:00.000Z' }));
      await s.repo.insert(
        company('child', { parentId: 'z', createdAt: '2026-01-04T00:00:00.000Z' }),
      );
      expect((await s.repo.all()).map((c) => c.id)).toEqual(['z', 'C', 'a', 'b', 'child']);
      const n = await s.repo.count();
      expect(n).toBe(5);
      expect(typeof n).toBe('number');
    });

    it('updateSettings replaces the settings as a whole; an unknown id changes nothing', async () => {
      await s.repo.insert(company('co', { settings: { antiHarassmentDefault: true } }));
      await s.repo.updateSettings('co', { testNumbers: ['+12125550100'] });
      expect((await s.repo.get('co'))?.settings).toStrictEqual({ testNumbers: ['+12125550100'] });
      await s.repo.updateSettings('co', {});
      expect((await s.repo.get('co'))?.settings).toStrictEqual({});
      await expect(s.repo.updateSettings('nobody', { testNumbers: [] })).resolves.toBeUndefined();
      expect(await s.repo.get('nobody')).toBeUndefined();
      expect(await s.repo.count()).toBe(1);
    });
  });

  describe('plans', () => {
    beforeEach(async () => {
      await s.repo.insert(company('co'));
    });

    it('savePlan returns the plan; getPlan reads it back with its types', async () => {
      const p = plan('co', { credits: 12.5, secondsRemaining: 2 ** 40 });
      expect(await s.repo.savePlan(p)).toBe(p);
      const got = await s.repo.getPlan('co');
      expect(got).toStrictEqual(p);
      expect(typeof got?.allowOutbound).toBe('boolean');
      expect(typeof got?.secondsRemaining).toBe('number');
      expect(typeof got?.maxChannels).toBe('number');
    });

    it('unlimited (null) counters and a plan that refuses outbound calls', async () => {
      const p = plan('co', {
        allowOutbound: false,
        credits: null,
        secondsRemaining: null,
        maxChannels: null,
        maxConcurrentCalls: null,
      });
      await s.repo.savePlan(p);
      expect(await s.repo.getPlan('co')).toStrictEqual(p);
    });

    it('getPlan is undefined without a plan; a plan needs an existing company', async () => {
      expect(await s.repo.getPlan('co')).toBeUndefined();
      expect(await s.repo.getPlan('nobody')).toBeUndefined();
      await expect(later(() => s.repo.savePlan(plan('nobody')))).rejects.toThrow();
      expect(await s.repo.getPlan('nobody')).toBeUndefined();
    });

    it('savePlan again replaces every field of the plan', async () => {
      await s.repo.savePlan(plan('co'));
      const next = plan('co', {
        allowOutbound: false,
        credits: 0,
        secondsRemaining: 0,
        maxChannels: 1,
        maxConcurrentCalls: null,
        modifiedAt: '2026-02-01T00:00:00.000Z',
      });
      await s.repo.savePlan(next);
      expect(await s.repo.getPlan('co')).toStrictEqual(next);
    });
  });

  describe('charge', () => {
    beforeEach(async () => {
      await s.repo.insert(company('co'));
    });

    it('takes seconds and cost off the plan and stamps modifiedAt', async () => {
      await s.repo.savePlan(plan('co', { credits: 10, secondsRemaining: 600 }));
      await s.repo.charge('co', 61, 0.35, '2026-03-01T00:00:00.000Z');
      expect(await s.repo.getPlan('co')).toStrictEqual(
        plan('co', {
          credits: 10 - 0.35,
          secondsRemaining: 539,
          modifiedAt: '2026-03-01T00:00:00.000Z',
        }),
      );
    });

    it('seconds stop at 0; credits may go below 0', async () => {
      await s.repo.savePlan(plan('co', { credits: 1, secondsRemaining: 30 }));
      await s.repo.charge('co', 45, 1.5, 'a');
      expect(await s.repo.getPlan('co')).toMatchObject({ secondsRemaining: 0, credits: -0.5 });
      await s.repo.charge('co', 10, 0.25, 'b');
      expect(await s.repo.getPlan('co')).toMatchObject({
        secondsRemaining: 0,
        credits: -0.75,
        modifiedAt: 'b',
      });
    });

    it('unlimited (null) counters stay unlimited', async () => {
      await s.repo.savePlan(plan('co', { credits: null, secondsRemaining: null }));
      await s.repo.charge('co', 120, 2, 'c');
      expect(await s.repo.getPlan('co')).toMatchObject({
        credits: null,
        secondsRemaining: null,
        modifiedAt: 'c',
      });
    });

    it('charging a company without a plan changes nothing', async () => {
      await expect(s.repo.charge('co', 60, 1, 'd')).resolves.toBeUndefined();
      await expect(s.repo.charge('nobody', 60, 1, 'd')).resolves.toBeUndefined();
      expect(await s.repo.getPlan('co')).toBeUndefined();
    });

    it('zero seconds and zero cost leave the counters and stamp modifiedAt', async () => {
      await s.repo.savePlan(plan('co'));
      await s.repo.charge('co', 0, 0, 'e');
      expect(await s.repo.getPlan('co')).toStrictEqual(plan('co', { modifiedAt: 'e' }));
    });

    it('charges issued at once all count (no lost update)', async () => {
      await s.repo.savePlan(plan('co', { credits: 100, secondsRemaining: 10_000 }));
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.repo.charge('co', 10, 0.5, `t${i}`)),
      );
      expect(await s.repo.getPlan('co')).toMatchObject({ credits: 90, secondsRemaining: 9800 });
    });
  });
});
