// The document repository's contract (company-owned JSON documents by
// kind), once per store: SQLite (the embedded default) and PostgreSQL (a
// throw-away server). A document reads back equal to what was stored,
// nested values and all, whatever the store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { OwnedDocument } from '../../src/model/entities.js';
import { DocumentRepository } from '../../src/store/document-repository.js';
import { PgDocumentRepository } from '../../src/store/pg/pg-document-repository.js';
import {
  postgresSeeded,
  promised,
  sqliteSeeded,
  type SeededStore,
  usePostgresServer,
  later,
} from '../support/store-under-test.js';

/** A document with the shapes real ones carry (see SipTrunk, Agent). */
interface Doc extends OwnedDocument {
  name: string;
  port: number | null;
  ratio?: number;
  active: boolean;
  callerIds: string[];
  headers: Record<string, string>;
  outgoing?: { ringTimeoutSeconds: number | null; recordingEnabled: boolean };
  optionsPing?: boolean;
}

type Repo = Async<DocumentRepository<Doc>>;

type StoreUnderTest = SeededStore<(kind: string) => Repo>;

const sqliteStore = (): StoreUnderTest =>
  sqliteSeeded((db) => (kind: string) => promised(new DocumentRepository<Doc>(db, kind)));

const postgres = usePostgresServer();
const { pools } = postgres;

const postgresStore = (): Promise<StoreUnderTest> =>
  postgresSeeded(
    postgres.server,
    pools,
    (pool) =>
      (kind: string): Repo =>
        new PgDocumentRepository<Doc>(pool, kind),
  );

const doc = (id: string, extra: Partial<Doc> = {}): Doc => ({
  id,
  companyId: 'co',
  name: `doc ${id}`,
  port: null,
  active: true,
  callerIds: [],
  headers: {},
  createdAt: '2026-01-01T00:00:00.000Z',
  modifiedAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('document repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  let trunks: Repo;
  let agents: Repo;
  beforeEach(async () => {
    s = await make();
    await s.seed(['co', 'other']);
    trunks = s.repo('sip_trunk');
    agents = s.repo('agent');
  });
  afterEach(async () => {
    await s?.close();
  });

  it('insert returns the document; get reads back every value, nested ones included', async () => {
    const d = doc('t1', {
      name: 'Trunk “één” ☎',
      port: 5061,
      ratio: 0.1 + 0.2,
      active: false,
      callerIds: ['+12125550100', '+12125550101'],
      headers: { 'X-Tenant': 'co', 'X-Empty': '' },
      outgoing: { ringTimeoutSeconds: null, recordingEnabled: true },
      optionsPing: false,
    });
    expect(await trunks.insert(d)).toBe(d);
    expect(await trunks.get('co', 't1')).toStrictEqual(d);
  });

  it('an absent optional field stays absent (not null, not undefined-valued)', async () => {
    await trunks.insert({ ...doc('t1'), optionsPing: undefined });
    const got = await trunks.get('co', 't1');
    expect(got).toStrictEqual(doc('t1'));
    expect(got && 'optionsPing' in got).toBe(false);
    expect(got && 'outgoing' in got).toBe(false);
  });

  it('get is scoped to the owner; getById is not; both are scoped to the kind', async () => {
    await trunks.insert(doc('t1'));
    expect(await trunks.get('other', 't1')).toBeUndefined();
    expect(await trunks.get('co', 'nope')).toBeUndefined();
    expect(await trunks.getById('t1')).toStrictEqual(doc('t1'));
    expect(await trunks.getById('nope')).toBeUndefined();
    expect(await agents.get('co', 't1')).toBeUndefined();
    expect(await agents.getById('t1')).toBeUndefined();
  });

  it('the same id may exist once per kind, each kind its own document', async () => {
    await trunks.insert(doc('same', { name: 'trunk' }));
    await agents.insert(doc('same', { name: 'agent', companyId: 'other' }));
    expect((await trunks.getById('same'))?.name).toBe('trunk');
    expect((await agents.getById('same'))?.name).toBe('agent');
    expect(await agents.remove('other', 'same')).toBe(true);
    expect(await trunks.get('co', 'same')).toBeDefined();
  });

  it('refuses a duplicate id within a kind and an unknown company', async () => {
    await trunks.insert(doc('t1'));
    await expect(later(() => trunks.insert(doc('t1', { companyId: 'other' })))).rejects.toThrow();
    await expect(later(() => trunks.insert(doc('t2', { companyId: 'nobody' })))).rejects.toThrow();
    expect(await trunks.listAll()).toStrictEqual([doc('t1')]);
  });

  it("list: the company's documents of the kind, by createdAt then id byte-wise", async () => {
    expect(await trunks.list('co')).toStrictEqual([]);
    const t = '2026-01-02T00:00:00.000Z';
    for (const id of ['b', 'a', '_x', 'B']) await trunks.insert(doc(id, { createdAt: t }));
    await trunks.insert(doc('zz', { createdAt: '2026-01-01T12:00:00.000Z' }));
    await trunks.insert(doc('elsewhere', { companyId: 'other' }));
    await agents.insert(doc('an-agent'));
    expect((await trunks.list('co')).map((d) => d.id)).toEqual(['zz', 'B', '_x', 'a', 'b']);
    expect(await trunks.list('other')).toStrictEqual([doc('elsewhere', { companyId: 'other' })]);
    expect(await trunks.list('nobody')).toStrictEqual([]);
  });

  it("listAll: every company's documents of the kind, by createdAt then id", async () => {
    expect(await trunks.listAll()).toStrictEqual([]);
    await trunks.insert(doc('c', { createdAt: '2026-01-03T00:00:00.000Z' }));
    await trunks.insert(doc('b', { companyId: 'other', createdAt: '2026-01-02T00:00:00.000Z' }));
    await trunks.insert(doc('a', { companyId: 'other', createdAt: '2026-01-03T00:00:00.000Z' }));
    await agents.insert(doc('agent', { createdAt: '2026-01-01T00:00:00.000Z' }));
    expect((await trunks.listAll()).map((d) => [d.companyId, d.id])).toEqual([
      ['other', 'b'],
      ['other', 'a'],
      ['co', 'c'],
    ]);
    expect((await agents.listAll()).map((d) => d.id)).toEqual(['agent']);
  });

  it('update replaces the data and modifiedAt, keeps createdAt, drops fields left out', async () => {
    await trunks.insert(
      doc('t1', {
        port: 5060,
        optionsPing: true,
        outgoing: { ringTimeoutSeconds: 30, recordingEnabled: false },
      }),
    );
    const next = doc('t1', {
      name: 'renamed',
      headers: { 'X-New': '1' },
      createdAt: 'ignored by update',
      modifiedAt: '2026-02-01T00:00:00.000Z',
    });
    expect(await trunks.update(next)).toBe(next);
    expect(await trunks.get('co', 't1')).toStrictEqual({
      ...next,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
  });

  it("update of another company's or a missing document changes nothing", async () => {
    await trunks.insert(doc('t1'));
    const foreign = doc('t1', { companyId: 'other', name: 'hijack', modifiedAt: 'later' });
    expect(await trunks.update(foreign)).toBe(foreign);
    expect(await trunks.get('co', 't1')).toStrictEqual(doc('t1'));
    expect(await trunks.get('other', 't1')).toBeUndefined();
    await trunks.update(doc('missing'));
    expect(await trunks.getById('missing')).toBeUndefined();
    await agents.update(doc('t1', { name: 'wrong kind' }));
    expect((await trunks.get('co', 't1'))?.name).toBe('doc t1');
  });

  it('remove deletes once, only within the owning company and the kind', async () => {
    await trunks.insert(doc('t1'));
    expect(await trunks.remove('other', 't1')).toBe(false);
    expect(await agents.remove('co', 't1')).toBe(false);
    expect(await trunks.remove('co', 't1')).toBe(true);
    expect(await trunks.remove('co', 't1')).toBe(false);
    expect(await trunks.getById('t1')).toBeUndefined();
  });
});
