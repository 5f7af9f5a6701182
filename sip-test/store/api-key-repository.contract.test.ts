// The API key repository's contract, once per store: SQLite (the embedded
// default) and PostgreSQL (a throw-away server). The hash is bytes (BLOB /
// BYTEA), full access a boolean, the groups a JSON array on both.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { ApiKey } from '../../src/model/entities.js';
import { SqliteApiKeyRepository } from '../../src/store/api-key-repository.js';
import { PgApiKeyRepository } from '../../src/store/pg/pg-api-key-repository.js';
import {
  postgresSeeded,
  promised,
  sqliteSeeded,
  type SeededStore,
  usePostgresServer,
  later,
} from '../support/store-under-test.js';

type Repo = Async<SqliteApiKeyRepository>;

type StoreUnderTest = SeededStore<Repo>;

const sqliteStore = (): StoreUnderTest =>
  sqliteSeeded((db) => promised(new SqliteApiKeyRepository(db)));

const postgres = usePostgresServer();
const { pools } = postgres;

const postgresStore = (): Promise<StoreUnderTest> =>
  postgresSeeded(postgres.server, pools, (pool) => new PgApiKeyRepository(pool));

const key = (id: string, extra: Partial<ApiKey> = {}): ApiKey => ({
  id,
  companyId: 'co',
  name: `key ${id}`,
  keyHash: Buffer.from(`hash of ${id}`),
  masked: `sk_…${id}`,
  fullAccess: false,
  groups: ['Calls', 'VoIP & SIP'],
  allowedIp: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUsedAt: null,
  ...extra,
});

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('API key repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await make();
    await s.seed(['co', 'other']);
  });
  afterEach(async () => {
    await s?.close();
  });

  it('insert returns the key; get reads it back exactly (bytes, booleans, nulls)', async () => {
    const k = key('k1');
    expect(await s.repo.insert(k)).toBe(k);
    const got = await s.repo.get('co', 'k1');
    expect(got).toStrictEqual(k);
    expect(Buffer.isBuffer(got?.keyHash)).toBe(true);
    const full = key('k2', {
      fullAccess: true,
      groups: [],
      allowedIp: '203.0.113.7',
      lastUsedAt: '2026-01-02T00:00:00.000Z',
    });
    await s.repo.insert(full);
    expect(await s.repo.get('co', 'k2')).toStrictEqual(full);
  });

  it('get is scoped to the company; unknown ids are undefined', async () => {
    await s.repo.insert(key('k1'));
    expect(await s.repo.get('other', 'k1')).toBeUndefined();
    expect(await s.repo.get('co', 'nope')).toBeUndefined();
    expect(await s.repo.get('nobody', 'nope')).toBeUndefined();
  });

  it('findByHash matches the exact bytes, any owner', async () => {
    const binary = Buffer.from([0x00, 0xff, 0x10, 0x00, 0x80, 0x7f]);
    await s.repo.insert(key('k1', { keyHash: binary }));
    await s.repo.insert(key('k2', { companyId: 'other', keyHash: Buffer.alloc(32, 0xab) }));
    expect(await s.repo.findByHash(Buffer.from(binary))).toStrictEqual(
      key('k1', { keyHash: binary }),
    );
    expect((await s.repo.findByHash(Buffer.alloc(32, 0xab)))?.id).toBe('k2');
    expect(await s.repo.findByHash(binary.subarray(0, 5))).toBeUndefined();
    expect(await s.repo.findByHash(Buffer.alloc(0))).toBeUndefined();
  });

  it('refuses a duplicate id, a duplicate hash and an unknown company', async () => {
    await s.repo.insert(key('k1'));
    await expect(
      later(() => s.repo.insert(key('k1', { keyHash: Buffer.from('new') }))),
    ).rejects.toThrow();
    await expect(
      later(() => s.repo.insert(key('k2', { keyHash: Buffer.from('hash of k1') }))),
    ).rejects.toThrow();
    await expect(later(() => s.repo.insert(key('k3', { companyId: 'nobody' })))).rejects.toThrow();
    expect((await s.repo.list('co')).map((k) => k.id)).toEqual(['k1']);
  });

  it("list: the company's keys by createdAt then id byte-wise", async () => {
    expect(await s.repo.list('co')).toStrictEqual([]);
    const t = '2026-01-02T00:00:00.000Z';
    for (const id of ['b', 'a', '_x', 'B'])
      await s.repo.insert(key(id, { createdAt: t, keyHash: Buffer.from(id) }));
    await s.repo.insert(key('zz', { createdAt: '2026-01-01T00:00:00.000Z' }));
    await s.repo.insert(key('elsewhere', { companyId: 'other' }));
    expect((await s.repo.list('co')).map((k) => k.id)).toEqual(['zz', 'B', '_x', 'a', 'b']);
    expect(await s.repo.list('other')).toStrictEqual([key('elsewhere', { companyId: 'other' })]);
    expect(await s.repo.list('nobody')).toStrictEqual([]);
  });

  it('update changes name, access, groups and allowed IP only', async () => {
    await s.repo.insert(key('k1', { lastUsedAt: 'used' }));
    await s.repo.update(
      key('k1', {
        name: 'renamed',
        fullAccess: true,
        groups: ['Billing'],
        allowedIp: '198.51.100.0/24',
        // Not columns update writes:
        keyHash: Buffer.from('other hash'),
        masked: 'changed',
        createdAt: 'changed',
        lastUsedAt: null,
      }),
    );
    expect(await s.repo.get('co', 'k1')).toStrictEqual(
      key('k1', {
        name: 'renamed',
        fullAccess: true,
        groups: ['Billing'],
        allowedIp: '198.51.100.0/24',
        lastUsedAt: 'used',
      }),
    );
    await s.repo.update(
      key('k1', { name: 'back', fullAccess: false, groups: [], allowedIp: null }),
    );
    expect(await s.repo.get('co', 'k1')).toMatchObject({
      name: 'back',
      fullAccess: false,
      groups: [],
      allowedIp: null,
    });
  });

  it('update finds the key by id alone and never moves it to another company', async () => {
    await s.repo.insert(key('k1'));
    await s.repo.update(key('k1', { companyId: 'other', name: 'by id' }));
    expect(await s.repo.get('co', 'k1')).toMatchObject({ companyId: 'co', name: 'by id' });
    expect(await s.repo.get('other', 'k1')).toBeUndefined();
    await expect(s.repo.update(key('missing'))).resolves.toBeUndefined();
    expect(await s.repo.get('co', 'missing')).toBeUndefined();
  });

  it('touch stamps lastUsedAt; an unknown id changes nothing', async () => {
    await s.repo.insert(key('k1'));
    await s.repo.touch('k1', '2026-05-05T10:00:00.000Z');
    expect((await s.repo.get('co', 'k1'))?.lastUsedAt).toBe('2026-05-05T10:00:00.000Z');
    await s.repo.touch('k1', '2026-05-06T10:00:00.000Z');
    expect((await s.repo.get('co', 'k1'))?.lastUsedAt).toBe('2026-05-06T10:00:00.000Z');
    await expect(s.repo.touch('missing', 'x')).resolves.toBeUndefined();
  });

  it('remove deletes once, and only within the owning company', async () => {
    await s.repo.insert(key('k1'));
    expect(await s.repo.remove('other', 'k1')).toBe(false);
    expect(await s.repo.get('co', 'k1')).toBeDefined();
    expect(await s.repo.remove('co', 'k1')).toBe(true);
    expect(await s.repo.remove('co', 'k1')).toBe(false);
    expect(await s.repo.get('co', 'k1')).toBeUndefined();
    expect(await s.repo.findByHash(Buffer.from('hash of k1'))).toBeUndefined();
  });
});
