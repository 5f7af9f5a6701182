// The opt-out repository's contract, once per store: SQLite (the embedded
// default) and PostgreSQL (a throw-away server). `permanent` is a boolean
// on both; saving a number again replaces its opt-out but keeps createdAt.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { OptOut } from '../../src/model/entities.js';
import { SqliteOptOutRepository } from '../../src/store/opt-out-repository.js';
import { PgOptOutRepository } from '../../src/store/pg/pg-opt-out-repository.js';
import {
  postgresSeeded,
  promised,
  sqliteSeeded,
  type SeededStore,
  usePostgresServer,
  later,
} from '../support/store-under-test.js';

type Repo = Async<SqliteOptOutRepository>;

type StoreUnderTest = SeededStore<Repo>;

const sqliteStore = (): StoreUnderTest =>
  sqliteSeeded((db) => promised(new SqliteOptOutRepository(db)));

const postgres = usePostgresServer();
const { pools } = postgres;

const postgresStore = (): Promise<StoreUnderTest> =>
  postgresSeeded(postgres.server, pools, (pool) => new PgOptOutRepository(pool));

const optOut = (phoneNumber: string, extra: Partial<OptOut> = {}): OptOut => ({
  companyId: 'co',
  phoneNumber,
  permanent: true,
  blockedUntil: null,
  reason: null,
  source: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('opt-out repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await make();
    await s.seed(['co', 'other']);
  });
  afterEach(async () => {
    await s?.close();
  });

  it('save returns the opt-out; get reads it back exactly (booleans and nulls)', async () => {
    const permanent = optOut('+12125550100');
    expect(await s.repo.save(permanent)).toBe(permanent);
    expect(await s.repo.get('co', '+12125550100')).toStrictEqual(permanent);
    const until = optOut('+12125550101', {
      permanent: false,
      blockedUntil: '2026-06-01T00:00:00.000Z',
      reason: 'asked on the call',
      source: 'agent',
    });
    await s.repo.save(until);
    const got = await s.repo.get('co', '+12125550101');
    expect(got).toStrictEqual(until);
    expect(got?.permanent).toBe(false);
  });

  it('get is per company and number; unknown ones are undefined', async () => {
    await s.repo.save(optOut('+12125550100'));
    expect(await s.repo.get('other', '+12125550100')).toBeUndefined();
    expect(await s.repo.get('co', '+12125550199')).toBeUndefined();
    expect(await s.repo.get('co', '12125550100')).toBeUndefined();
  });

  it('the same number is a separate opt-out in each company', async () => {
    await s.repo.save(optOut('+12125550100', { reason: 'co' }));
    await s.repo.save(optOut('+12125550100', { companyId: 'other', reason: 'other' }));
    expect((await s.repo.get('co', '+12125550100'))?.reason).toBe('co');
    expect((await s.repo.get('other', '+12125550100'))?.reason).toBe('other');
  });

  it('saving a number again replaces its opt-out and keeps the first createdAt', async () => {
    await s.repo.save(optOut('+12125550100', { reason: 'first', source: 'api' }));
    const again = optOut('+12125550100', {
      permanent: false,
      blockedUntil: '2026-07-01T00:00:00.000Z',
      reason: 'second',
      source: 'dtmf',
      createdAt: '2026-02-02T00:00:00.000Z',
    });
    expect(await s.repo.save(again)).toBe(again);
    expect(await s.repo.get('co', '+12125550100')).toStrictEqual({
      ...again,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    await s.repo.save(optOut('+12125550100'));
    expect(await s.repo.get('co', '+12125550100')).toStrictEqual(optOut('+12125550100'));
    expect(await s.repo.list('co')).toHaveLength(1);
  });

  it('refuses an opt-out for an unknown company', async () => {
    await expect(
      later(() => s.repo.save(optOut('+12125550100', { companyId: 'nobody' }))),
    ).rejects.toThrow();
    expect(await s.repo.get('nobody', '+12125550100')).toBeUndefined();
  });

  it("list: the company's opt-outs by createdAt then number byte-wise", async () => {
    expect(await s.repo.list('co')).toStrictEqual([]);
    const t = '2026-01-02T00:00:00.000Z';
    for (const n of ['+2', '+10', 'B', 'a', '_x']) await s.repo.save(optOut(n, { createdAt: t }));
    await s.repo.save(optOut('+9', { createdAt: '2026-01-01T00:00:00.000Z' }));
    await s.repo.save(optOut('+1', { companyId: 'other' }));
    expect((await s.repo.list('co')).map((o) => o.phoneNumber)).toEqual([
      '+9',
      '+10',
      '+2',
      'B',
      '_x',
      'a',
    ]);
    expect(await s.repo.list('other')).toStrictEqual([optOut('+1', { companyId: 'other' })]);
  });

  it('remove deletes once, and only within the company', async () => {
    await s.repo.save(optOut('+12125550100'));
    expect(await s.repo.remove('other', '+12125550100')).toBe(false);
    expect(await s.repo.remove('co', '+12125550100')).toBe(true);
    expect(await s.repo.remove('co', '+12125550100')).toBe(false);
    expect(await s.repo.get('co', '+12125550100')).toBeUndefined();
    expect(await s.repo.list('co')).toStrictEqual([]);
  });
});
