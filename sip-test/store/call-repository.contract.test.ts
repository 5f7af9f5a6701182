// The call repository's contract, once per store: SQLite (the embedded
// default, answered through promises) and PostgreSQL (a throw-away server).
// Then what only a server store faces: the caller's transaction, and two
// daemons changing the same record at once.
import type Database from 'better-sqlite3';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { CallRepository } from '../../src/calls/ports/call-store.js';
import type { CallRecord } from '../../src/model/call-record.js';
import { callRecordFixture } from '../../src/model/test-support/call-record-fixture.js';
import { SqliteCallRepository } from '../../src/store/call-repository.js';
import { PgCallRepository } from '../../src/store/pg/pg-call-repository.js';
import { PgUnitOfWork } from '../../src/store/pg/pg-unit-of-work.js';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
} from '../support/store-under-test.js';

/** What the change listener saw: the status before (null on insert), after, and when. */
type Change = [string | null, string, string];

interface StoreUnderTest {
  repo: Async<CallRepository>;
  /** Every call of the change listener, in order. */
  changes: Change[];
  /** The listener throws, after writing its outbox row, when a record reaches one of these. */
  failOn: Set<string>;
  /** The listener's outbox rows (`recordId:status`), as committed. */
  outbox(): Promise<string[]>;
  addCompany(id: string): Promise<void>;
  /**
   * Set where the hook is the webhook outbox (the daemon's PostgreSQL store):
   * it is told of a company's updates only while the company has an enabled
   * endpoint, which this adds; the updates of the others run as one statement.
   */
  addWebhookEndpoint?(companyId: string): Promise<void>;
}

function listenerLog(
  changes: Change[],
  before: CallRecord | undefined,
  after: CallRecord,
  at: string,
): string {
  changes.push([before?.status ?? null, after.status, at]);
  return `${after.id}:${after.status}:${changes.length}`;
}

/**
 * `promised` answers a synchronous throw by throwing at the call; an async
 * method rejects instead. This turns the throw into a rejection, so one
 * `rejects` assertion holds for both stores.
 */
function rejecting<T extends object>(repo: T): T {
  return new Proxy(repo, {
    get: (target, key) => {
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function'
        ? async (...args: unknown[]) => (v as (...a: unknown[]) => unknown).apply(target, args)
        : v;
    },
  });
}

function sqliteStore(): StoreUnderTest {
  const db: Database.Database = sqliteDatabase();
  const changes: Change[] = [];
  const failOn = new Set<string>();
  const repo = new SqliteCallRepository(db, (before, after, at) => {
    const id = listenerLog(changes, before, after, at);
    db.prepare(
      `INSERT INTO webhook_events (id, company_id, record_id, type, body, created_at)
       VALUES (?, ?, ?, ?, '{}', ?)`,
    ).run(id, after.companyId, after.id, after.status, at);
    if (failOn.has(after.status)) throw new Error('listener failed');
  });
  return {
    repo: rejecting(promised(repo)),
    changes,
    failOn,
    outbox: async () =>
      (
        db.prepare(`SELECT record_id || ':' || type AS k FROM webhook_events`).all() as {
          k: string;
        }[]
      )
        .map((r) => r.k)
        .sort(),
    addCompany: async (id) => {
      db.prepare(`INSERT INTO companies (id, name, created_at) VALUES (?, ?, 'x')`).run(id, id);
    },
  };
}

const postgres = usePostgresServer();
const { pools } = postgres;

/** `updatesAlone`: the hook is declared the outbox, as the daemon's store declares it. */
async function postgresStore(updatesAlone = false): Promise<StoreUnderTest & { url: string }> {
  const { url, pool } = await postgresDatabase(postgres.server, pools);
  const changes: Change[] = [];
  const failOn = new Set<string>();
  const repo = new PgCallRepository(
    pool,
    async (before, after, at, tx) => {
      const id = listenerLog(changes, before, after, at);
      await tx.query(
        `INSERT INTO webhook_events (id, company_id, record_id, type, body, created_at)
       VALUES ($1, $2, $3, $4, '{}', $5)`,
        [id, after.companyId, after.id, after.status, at],
      );
      if (failOn.has(after.status)) throw new Error('listener failed');
    },
    undefined,
    { hookNeedsWebhooks: updatesAlone },
  );
  const addWebhookEndpoint = async (companyId: string): Promise<void> => {
    await pool.query(
      `INSERT INTO webhook_endpoints (id, company_id, url, event_types, enabled, secret,
         created_at, modified_at)
       VALUES ($1, $2, 'https://example.com/hook', '[]', true, 's', 'x', 'x')`,
      [`ep-${companyId}`, companyId],
    );
  };
  return {
    ...(updatesAlone ? { addWebhookEndpoint } : {}),
    url,
    repo,
    changes,
    failOn,
    outbox: async () =>
      (
        await pool.query<{ k: string }>(`SELECT record_id || ':' || type AS k FROM webhook_events`)
      ).rows
        .map((r) => r.k)
        .sort(),
    addCompany: async (id) => {
      await pool.query(`INSERT INTO companies (id, name, created_at) VALUES ($1, $1, 'x')`, [id]);
    },
  };
}

const T0 = '2026-03-01T10:00:00.000Z';
const t = (minutes: number): string => new Date(Date.parse(T0) + minutes * 60_000).toISOString();

function record(id: string, extra: Partial<CallRecord> & { minute?: number } = {}): CallRecord {
  const { minute = 0, ...rest } = extra;
  return callRecordFixture({
    id,
    callId: `call-${id}`,
    companyId: 'co',
    phoneNumber: '+12125550001',
    createdAt: t(minute),
    modifiedAt: t(minute),
    ...rest,
  });
}

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
  ['PostgreSQL, updates in one statement', async () => postgresStore(true)],
] as const)('call repository contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await make();
    await s.addCompany('co');
    await s.addCompany('other');
  });

  describe('insert and read', () => {
    it('stores the whole record and reads it back equal, numbers as numbers', async () => {
      const r = record('r1', {
        agentId: 'agent-1',
        status: 'scheduled',
        scheduledAt: t(30),
        sipTrunkId: 'trunk-1',
        additionalPhoneNumbers: ['+12125550002'],
        totalCost: 0.30000000000000004,
        retries: 2,
        duration: 1e-7,
        hertz: 8000,
        metadata: { crm: '9', 'ü-key': 'naïve 😀' },
        superVariables: { due: { placeholder: '{{due}}', value: 'July 1st', type: 'text' } },
        participants: [
          {
            type: 'trunk',
            role: 'Contact',
            status: 'joined',
            invitedAt: t(0),
            remotePort: 5060,
            networkQuality: {
              packetsReceived: 1500,
              packetsLost: 3,
              lossPct: 0.2,
              packetsOutOfOrder: 0,
              jitterMs: 12.5,
            },
          },
        ],
        routing: { via: 'outbound_route', outboundRouteId: null },
        destinationCountry: null,
        humanInCall: false,
      });
      expect(await s.repo.insert(r)).toBe(r);
      const back = await s.repo.getById('r1');
      expect(back).toStrictEqual(r);
      expect(typeof back!.totalCost).toBe('number');
      expect(back!.participants[0]!.networkQuality!.jitterMs).toBe(12.5);
    });

    it('drops fields that are undefined', async () => {
      await s.repo.insert({ ...record('r1'), summary: undefined });
      expect(Object.keys((await s.repo.getById('r1'))!)).not.toContain('summary');
    });

    it('logs the first status as event 1 with no detail', async () => {
      await s.repo.insert(record('r1', { status: 'to_be_processed' }));
      expect(await s.repo.events('r1')).toStrictEqual([
        { seq: 1, at: t(0), status: 'to_be_processed', detail: null },
      ]);
    });

    it('rejects a second record with the same id or the same callId, or of an unknown company', async () => {
      await s.repo.insert(record('r1'));
      await expect(s.repo.insert(record('r1', { callId: 'fresh' }))).rejects.toThrow();
      await expect(s.repo.insert(record('r2', { callId: 'call-r1' }))).rejects.toThrow();
      await expect(s.repo.insert(record('r3', { companyId: 'nobody' }))).rejects.toThrow();
      expect(await s.repo.events('r1')).toHaveLength(1);
      expect(await s.repo.getById('r2')).toBeUndefined();
      expect(await s.repo.getById('r3')).toBeUndefined();
    });

    it('getById and get answer undefined for an unknown record', async () => {
      expect(await s.repo.getById('nope')).toBeUndefined();
      expect(await s.repo.get('co', 'nope')).toBeUndefined();
      expect(await s.repo.events('nope')).toEqual([]);
    });

    it('get finds a company call by record id or callId, never another company’s', async () => {
      await s.repo.insert(record('r1'));
      expect((await s.repo.get('co', 'r1'))?.id).toBe('r1');
      expect((await s.repo.get('co', 'call-r1'))?.id).toBe('r1');
      expect(await s.repo.get('other', 'r1')).toBeUndefined();
      expect(await s.repo.get('other', 'call-r1')).toBeUndefined();
    });

    it('get prefers the record whose id matches over one whose callId matches', async () => {
      await s.repo.insert(record('b', { callId: 'x' }));
      await s.repo.insert(record('x', { callId: 'y' }));
      expect((await s.repo.get('co', 'x'))?.id).toBe('x');
    });
  });

  describe('update', () => {
    beforeEach(async () => {
      await s.repo.insert(
        record('r1', {
          status: 'trying',
          summary: 'first',
          metadata: { a: '1', b: '2' },
          sipTrunkId: 'trunk-1',
        }),
      );
    });

    it('merges the patch over the stored record and stamps modifiedAt', async () => {
      const next = await s.repo.update('r1', { metadata: { c: '3' }, endDetail: 'x' }, t(1));
      const stored = await s.repo.getById('r1');
      expect(stored).toStrictEqual(next);
      expect(stored).toMatchObject({
        status: 'trying',
        summary: 'first',
        sipTrunkId: 'trunk-1',
        endDetail: 'x',
        modifiedAt: t(1),
        createdAt: t(0),
        callId: 'call-r1',
      });
      // A top-level field is replaced whole, not merged key by key.
      expect(stored!.metadata).toStrictEqual({ c: '3' });
    });

    it('updates the column fields too (number, agent, schedule)', async () => {
      await s.repo.update(
        'r1',
        { phoneNumber: '+12125550009', agentId: 'agent-2', scheduledAt: t(60) },
        t(1),
      );
      expect(await s.repo.getById('r1')).toMatchObject({
        phoneNumber: '+12125550009',
        agentId: 'agent-2',
        scheduledAt: t(60),
      });
      await s.repo.update('r1', { agentId: null, scheduledAt: null }, t(2));
      expect(await s.repo.getById('r1')).toMatchObject({ agentId: null, scheduledAt: null });
    });

    it('an undefined value in the patch removes the field from the stored record', async () => {
      const next = await s.repo.update('r1', { summary: undefined }, t(1));
      expect(next!.summary).toBeUndefined();
      expect(Object.keys((await s.repo.getById('r1'))!)).not.toContain('summary');
    });

    it('logs a status change with its detail; the same status or none logs nothing', async () => {
      await s.repo.update('r1', { status: 'ringing' }, t(1), { detail: '180 Ringing' });
      await s.repo.update('r1', { status: 'ringing' }, t(2), { detail: 'ignored' });
      await s.repo.update('r1', { summary: 'second' }, t(3), { detail: 'ignored' });
      await s.repo.update('r1', { status: 'in_call' }, t(4));
      expect(await s.repo.events('r1')).toStrictEqual([
        { seq: 1, at: t(0), status: 'trying', detail: null },
        { seq: 2, at: t(1), status: 'ringing', detail: '180 Ringing' },
        { seq: 3, at: t(4), status: 'in_call', detail: null },
      ]);
      expect((await s.repo.getById('r1'))!.modifiedAt).toBe(t(4));
    });

    it('onlyFrom: applies while the stored status is listed, else changes nothing', async () => {
      expect(
        await s.repo.update('r1', { status: 'failed' }, t(1), { onlyFrom: ['ringing', 'in_call'] }),
      ).toBeUndefined();
      expect(await s.repo.update('r1', { status: 'failed' }, t(1), { onlyFrom: [] })).toBe(
        undefined,
      );
      expect(await s.repo.getById('r1')).toMatchObject({ status: 'trying', modifiedAt: t(0) });
      expect(await s.repo.events('r1')).toHaveLength(1);
      expect(s.changes).toEqual([[null, 'trying', t(0)]]);

      const done = await s.repo.update('r1', { status: 'failed', endDetail: 'x' }, t(2), {
        onlyFrom: ['trying'],
      });
      expect(done).toMatchObject({ status: 'failed', endDetail: 'x' });
      // A final status is never left: the next compare-and-set finds `failed`.
      expect(
        await s.repo.update('r1', { status: 'answered' }, t(3), { onlyFrom: ['trying'] }),
      ).toBeUndefined();
      expect((await s.repo.events('r1')).map((e) => e.status)).toEqual(['trying', 'failed']);
    });

    it("given the writer's copy (current): the same record, events and change as without it", async () => {
      await s.addWebhookEndpoint?.('co'); // the change listener is told of every update
      const mine = (await s.repo.getById('r1'))!;
      const next = await s.repo.update('r1', { status: 'ringing', endDetail: 'y' }, t(1), {
        current: mine,
        onlyFrom: ['trying'],
        detail: '180',
      });
      expect(await s.repo.getById('r1')).toStrictEqual(next);
      expect(next).toMatchObject({ status: 'ringing', summary: 'first', endDetail: 'y' });
      expect(s.changes.at(-1)).toEqual(['trying', 'ringing', t(1)]);
      const after = await s.repo.update('r1', { summary: 'mine' }, t(2), { current: next! });
      expect(after).toMatchObject({ status: 'ringing', summary: 'mine', modifiedAt: t(2) });
      expect((await s.repo.events('r1')).map((e) => [e.status, e.detail])).toEqual([
        ['trying', null],
        ['ringing', '180'],
      ]);
    });

    it("a stale copy of the writer's loses nothing another writer stored, and onlyFrom judges the stored status", async () => {
      await s.addWebhookEndpoint?.('co');
      const mine = (await s.repo.getById('r1'))!;
      // another writer: a field, then the status
      await s.repo.update('r1', { endDetail: 'theirs' }, t(1));
      const merged = await s.repo.update('r1', { summary: 'mine' }, t(2), { current: mine });
      expect(merged).toMatchObject({ summary: 'mine', endDetail: 'theirs', modifiedAt: t(2) });
      expect(await s.repo.getById('r1')).toStrictEqual(merged);

      await s.repo.update('r1', { status: 'cancelled' }, t(3));
      // the copy still says `trying`: the stored `cancelled` refuses
      expect(
        await s.repo.update('r1', { status: 'ringing' }, t(4), {
          current: merged!,
          onlyFrom: ['trying'],
        }),
      ).toBeUndefined();
      expect(await s.repo.getById('r1')).toMatchObject({ status: 'cancelled', modifiedAt: t(3) });
      expect(s.changes.at(-1)).toEqual(['trying', 'cancelled', t(3)]);
    });

    it('answers undefined for an unknown record, with or without a status', async () => {
      expect(await s.repo.update('nope', { status: 'failed' }, t(1))).toBeUndefined();
      expect(await s.repo.update('nope', { summary: 'x' }, t(1))).toBeUndefined();
      expect(await s.repo.events('nope')).toEqual([]);
    });
  });

  describe('the change listener', () => {
    // An outbox hook is told of updates for a company with webhooks only.
    beforeEach(async () => s.addWebhookEndpoint?.('co'));

    it('sees every insert and update, in order, with the record before and after', async () => {
      await s.repo.insert(record('r1', { status: 'to_be_processed' }));
      await s.repo.update('r1', { status: 'trying' }, t(1));
      await s.repo.update('r1', { summary: 'x' }, t(2));
      await s.repo.update('r1', { status: 'in_call' }, t(3), { onlyFrom: ['busy'] });
      await s.repo.update('r1', { status: 'busy' }, t(4), { onlyFrom: ['trying'] });
      expect(s.changes).toEqual([
        [null, 'to_be_processed', t(0)],
        ['to_be_processed', 'trying', t(1)],
        ['trying', 'trying', t(2)],
        ['trying', 'busy', t(4)],
      ]);
      expect(await s.outbox()).toEqual(['r1:busy', 'r1:to_be_processed', 'r1:trying', 'r1:trying']);
    });

    it('a listener that throws rolls the insert back, with its own writes', async () => {
      s.failOn.add('scheduled');
      await expect(s.repo.insert(record('r1', { status: 'scheduled' }))).rejects.toThrow(
        'listener failed',
      );
      expect(await s.repo.getById('r1')).toBeUndefined();
      expect(await s.repo.events('r1')).toEqual([]);
      expect(await s.outbox()).toEqual([]);
    });

    it('a listener that throws rolls the update back, with its own writes', async () => {
      await s.repo.insert(record('r1', { status: 'trying' }));
      s.failOn.add('failed');
      await expect(
        s.repo.update('r1', { status: 'failed', endDetail: 'x' }, t(1), { detail: 'd' }),
      ).rejects.toThrow('listener failed');
      expect(await s.repo.getById('r1')).toMatchObject({ status: 'trying', modifiedAt: t(0) });
      expect((await s.repo.getById('r1'))!.endDetail).toBeUndefined();
      expect(await s.repo.events('r1')).toHaveLength(1);
      expect(await s.outbox()).toEqual(['r1:trying']);
      // The store is usable afterwards.
      expect(await s.repo.update('r1', { status: 'ringing' }, t(2))).toMatchObject({
        status: 'ringing',
      });
    });
  });

  describe('query', () => {
    beforeEach(async () => {
      // Created a minute apart (r4 and r5 at the same instant), two agents, two numbers.
      await s.repo.insert(record('r1', { minute: 1, status: 'failed', agentId: 'a' }));
      await s.repo.insert(record('r2', { minute: 2, status: 'answered', agentId: 'b' }));
      await s.repo.insert(
        record('r3', { minute: 3, status: 'failed', agentId: 'a', phoneNumber: '+12125550002' }),
      );
      await s.repo.insert(record('r5', { minute: 4, status: 'busy', agentId: 'a' }));
      await s.repo.insert(record('r4', { minute: 4, status: 'busy', agentId: 'b' }));
      await s.repo.insert(record('x1', { minute: 9, companyId: 'other', status: 'failed' }));
    });
    const ids = (r: { items: CallRecord[] }): string[] => r.items.map((i) => i.id);
    const all = { limit: 100, offset: 0 };

    it('lists a company’s calls newest first, ties by id, with the total', async () => {
      const r = await s.repo.query('co', all);
      expect(ids(r)).toEqual(['r4', 'r5', 'r3', 'r2', 'r1']);
      expect(r.total).toBe(5);
      expect(r.items[0]).toStrictEqual(await s.repo.getById('r4'));
    });

    it('pages with limit and offset; the total counts every match', async () => {
      expect(await s.repo.query('co', { limit: 2, offset: 0 }).then(ids)).toEqual(['r4', 'r5']);
      expect(await s.repo.query('co', { limit: 2, offset: 2 }).then(ids)).toEqual(['r3', 'r2']);
      const last = await s.repo.query('co', { limit: 2, offset: 4 });
      expect([ids(last), last.total]).toEqual([['r1'], 5]);
      const past = await s.repo.query('co', { limit: 2, offset: 10 });
      expect([ids(past), past.total]).toEqual([[], 5]);
      const none = await s.repo.query('co', { limit: 0, offset: 0 });
      expect([ids(none), none.total]).toEqual([[], 5]);
    });

    it('filters by statuses (an empty list filters nothing), number and agent', async () => {
      expect(await s.repo.query('co', { ...all, statuses: ['failed', 'busy'] }).then(ids)).toEqual([
        'r4',
        'r5',
        'r3',
        'r1',
      ]);
      expect((await s.repo.query('co', { ...all, statuses: [] })).total).toBe(5);
      expect(await s.repo.query('co', { ...all, statuses: ['trying'] })).toEqual({
        items: [],
        total: 0,
      });
      expect(await s.repo.query('co', { ...all, phoneNumber: '+12125550002' }).then(ids)).toEqual([
        'r3',
      ]);
      expect(await s.repo.query('co', { ...all, agentId: 'b' }).then(ids)).toEqual(['r4', 'r2']);
      const both = await s.repo.query('co', { ...all, agentId: 'a', statuses: ['failed'] });
      expect([ids(both), both.total]).toEqual([['r3', 'r1'], 2]);
    });

    it('filters by creation time: from inclusive, to exclusive', async () => {
      expect(
        await s.repo.query('co', { ...all, createdFrom: t(2), createdTo: t(4) }).then(ids),
      ).toEqual(['r3', 'r2']);
      expect(await s.repo.query('co', { ...all, createdFrom: t(4) }).then(ids)).toEqual([
        'r4',
        'r5',
      ]);
      expect(await s.repo.query('co', { ...all, createdTo: t(1) }).then(ids)).toEqual([]);
    });

    it('answers nothing for a company with no calls', async () => {
      expect(await s.repo.query('nobody', all)).toEqual({ items: [], total: 0 });
    });
  });

  describe('counts and recovery', () => {
    beforeEach(async () => {
      await s.repo.insert(record('r1', { status: 'ringing', sipTrunkId: 't1' }));
      await s.repo.insert(record('r2', { status: 'in_call', sipTrunkId: 't1' }));
      await s.repo.insert(record('r3', { status: 'failed', sipTrunkId: 't1' }));
      await s.repo.insert(record('r4', { status: 'in_call', sipTrunkId: 't2' }));
      await s.repo.insert(
        record('x1', { companyId: 'other', status: 'ringing', sipTrunkId: 't1', minute: 1 }),
      );
    });

    it('countByStatus counts a company’s calls in the statuses, as a number', async () => {
      const n = await s.repo.countByStatus('co', ['ringing', 'in_call']);
      expect(n).toBe(3);
      expect(typeof n).toBe('number');
      expect(await s.repo.countByStatus('other', ['ringing', 'in_call'])).toBe(1);
      expect(await s.repo.countByStatus('co', [])).toBe(0);
      expect(await s.repo.countByStatus('nobody', ['ringing'])).toBe(0);
    });

    it('countLiveOnTrunk counts a trunk’s calls across companies', async () => {
      expect(await s.repo.countLiveOnTrunk('t1', ['ringing', 'in_call'])).toBe(3);
      expect(await s.repo.countLiveOnTrunk('t2', ['ringing', 'in_call'])).toBe(1);
      expect(await s.repo.countLiveOnTrunk('t3', ['ringing', 'in_call'])).toBe(0);
      expect(await s.repo.countLiveOnTrunk('t1', [])).toBe(0);
      // The trunk is read from the document, so a patch moves the call.
      await s.repo.update('r2', { sipTrunkId: 't2' }, t(1));
      expect(await s.repo.countLiveOnTrunk('t2', ['in_call'])).toBe(2);
    });

    it('countTransferLegs counts transferring calls bridged by the gateway only', async () => {
      const details = (via: 'refer' | 'bridge' | undefined) => ({
        callSourceId: 'r',
        callSourceCallId: 'sip',
        transferringStatus: 'transferring' as const,
        callerId: null,
        destinationType: 'External' as const,
        destinationNumber: '+12125559999',
        transferMode: 'blind' as const,
        requestedBy: 'agent' as const,
        startedAt: t(0),
        ...(via ? { via } : {}),
      });
      expect(await s.repo.countTransferLegs('co')).toBe(0);
      await s.repo.update(
        'r1',
        { status: 'transferring', transferringDetails: details('bridge') },
        t(1),
      );
      await s.repo.update(
        'r2',
        { status: 'transferring', transferringDetails: details('refer') },
        t(1),
      );
      await s.repo.update(
        'r4',
        { status: 'transferring', transferringDetails: details(undefined) },
        t(1),
      );
      await s.repo.update('r3', { transferringDetails: details('bridge') }, t(1));
      await s.repo.update(
        'x1',
        { status: 'transferring', transferringDetails: details('bridge') },
        t(1),
      );
      expect(await s.repo.countTransferLegs('co')).toBe(1);
      expect(await s.repo.countTransferLegs('other')).toBe(1);
    });

    it('findByStatus finds every company’s calls in the statuses', async () => {
      const found = await s.repo.findByStatus(['ringing', 'in_call']);
      expect(found.map((r) => r.id).sort()).toEqual(['r1', 'r2', 'r4', 'x1']);
      expect(found.find((r) => r.id === 'x1')).toStrictEqual(await s.repo.getById('x1'));
      expect(await s.repo.findByStatus([])).toEqual([]);
      expect(await s.repo.findByStatus(['scheduled'])).toEqual([]);
    });
  });
});

describe('PostgreSQL only: transactions and daemons', () => {
  let url: string;
  let pool: Awaited<ReturnType<typeof postgresDatabase>>['pool'];
  beforeAll(async () => {
    ({ url, pool } = await postgresDatabase(postgres.server, pools));
    await pool.query(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`);
  });

  it('a NUL in a string (PostgreSQL cannot store one) is dropped, not the whole write', async () => {
    const repo = new PgCallRepository(pool);
    await repo.insert({ ...record('nul1'), summary: 'caller said a\u0000b' });
    await repo.update('nul1', { summary: 'and then c\u0000d\u0000' }, 'x');
    expect((await repo.getById('nul1'))!.summary).toBe('and then cd');
  });

  it('the hook runs on the change’s transaction client, not on the pool', async () => {
    const seen: unknown[] = [];
    const repo = new PgCallRepository(pool, async (_b, _a, _at, db) => {
      seen.push(db);
      // Inside the transaction: the hook sees the row not yet committed.
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM calls WHERE id = 'h1'`,
      );
      expect(rows[0]!.n).toBe(1);
    });
    await repo.insert(record('h1'));
    await repo.update('h1', { status: 'trying' }, t(1));
    expect(seen).toHaveLength(2);
    expect(seen.every((db) => db !== pool)).toBe(true);
  });

  it('an outbox hook is skipped by the updates of a company without webhooks (one statement), not by the others', async () => {
    const s = await postgresStore(true);
    await s.addCompany('co');
    await s.addCompany('other');
    await s.repo.insert(record('w1', { status: 'trying' }));
    await s.repo.insert(record('w2', { status: 'trying', companyId: 'other', phoneNumber: '+1' }));
    await s.addWebhookEndpoint!('other');
    await s.repo.update('w1', { status: 'ringing' }, t(1), { detail: '180' });
    await s.repo.update('w2', { status: 'ringing' }, t(1), { detail: '180' });
    // Both inserts ran the hook; of the updates, only the company with an endpoint's.
    expect(s.changes).toEqual([
      [null, 'trying', t(0)],
      [null, 'trying', t(0)],
      ['trying', 'ringing', t(1)],
    ]);
    for (const id of ['w1', 'w2']) {
      expect((await s.repo.events(id)).map((e) => [e.seq, e.status, e.detail])).toEqual([
        [1, 'trying', null],
        [2, 'ringing', '180'],
      ]);
    }
  });

  it('handed a client inside a unit of work, the caller’s rollback undoes its writes', async () => {
    const uow = new PgUnitOfWork(pool);
    const hooked: unknown[] = [];
    await expect(
      uow.run(['number:co:+12125550001'], async (tx) => {
        const repo = new PgCallRepository(tx, async (_b, _a, _at, db) => {
          hooked.push(db);
        });
        await repo.insert(record('u1'));
        await repo.update('u1', { status: 'trying' }, t(1));
        expect((await repo.getById('u1'))!.status).toBe('trying');
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(hooked).toHaveLength(2);
    expect(hooked.every((db) => db !== pool)).toBe(true);
    const repo = new PgCallRepository(pool);
    expect(await repo.getById('u1')).toBeUndefined();
    expect(await repo.events('u1')).toEqual([]);
    // Committed when the unit of work commits.
    await uow.run([], async (tx) => {
      await new PgCallRepository(tx).insert(record('u2'));
    });
    expect((await repo.getById('u2'))?.id).toBe('u2');
  });

  it('a one-statement update inside a unit of work commits and rolls back with it', async () => {
    const uow = new PgUnitOfWork(pool);
    const inTx = (tx: Parameters<Parameters<PgUnitOfWork['run']>[1]>[0]) =>
      new PgCallRepository(tx, async () => undefined, undefined, { hookNeedsWebhooks: true });
    await uow.run([], async (tx) => {
      await inTx(tx).insert(record('o1', { status: 'trying' }));
    });
    await expect(
      uow.run(['number:co:+12125550001'], async (tx) => {
        const next = await inTx(tx).update('o1', { status: 'ringing', summary: 's' }, t(1));
        expect(next).toMatchObject({ status: 'ringing', summary: 's' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const repo = new PgCallRepository(pool);
    expect(await repo.getById('o1')).toMatchObject({ status: 'trying', modifiedAt: t(0) });
    expect(await repo.events('o1')).toHaveLength(1);
    await uow.run([], async (tx) => {
      await inTx(tx).update('o1', { status: 'ringing' }, t(2), { onlyFrom: ['trying'] });
    });
    expect((await repo.events('o1')).map((e) => e.status)).toEqual(['trying', 'ringing']);
  });

  it('two daemons racing a compare-and-set on one record: exactly one wins', async () => {
    const a = new PgCallRepository(pools.open(url));
    const b = new PgCallRepository(pools.open(url));
    await a.insert(record('cas', { status: 'trying' }));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).update('cas', { status: 'failed', endDetail: `by ${i}` }, t(1), {
          onlyFrom: ['trying'],
        }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await a.events('cas')).map((e) => [e.seq, e.status])).toEqual([
      [1, 'trying'],
      [2, 'failed'],
    ]);
  });

  it('two daemons patching different fields of one record at once lose none of them', async () => {
    const a = new PgCallRepository(pools.open(url));
    const b = new PgCallRepository(pools.open(url));
    await a.insert(record('lw', { status: 'in_call' }));
    const patches = [
      { summary: 's' },
      { shortSummary: 'ss' },
      { funnelStatus: 'f' },
      { resolutionStatus: 'r' },
      { conversionStatus: 'c' },
      { endDetail: 'e' },
      { recordingFileId: 'rec' },
      { outboundResultLabel: 'o' },
    ];
    await Promise.all(patches.map((p, i) => (i % 2 ? a : b).update('lw', p, t(i))));
    expect(await a.getById('lw')).toMatchObject(Object.assign({}, ...patches) as object);
  });
});
