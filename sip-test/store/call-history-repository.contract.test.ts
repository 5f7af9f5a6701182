// The call history's contract (what the protections read about a number),
// once per store: SQLite (answered through promises) and PostgreSQL (a
// throw-away server). Records are written through each store's call
// repository, so the numbers index (call_numbers, kept by trigger) is the
// store's own.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { CallRepository, OptOutRepository } from '../../src/calls/ports/call-store.js';
import type { CallHistory } from '../../src/calls/protections/call-history.js';
import type { CallRecord } from '../../src/model/call-record.js';
import { callRecordFixture } from '../../src/model/test-support/call-record-fixture.js';
import { SqliteCallHistoryRepository } from '../../src/store/call-history-repository.js';
import { SqliteCallRepository } from '../../src/store/call-repository.js';
import { PgCallHistoryRepository } from '../../src/store/pg/pg-call-history-repository.js';
import { PgCallRepository } from '../../src/store/pg/pg-call-repository.js';
import { PgOptOutRepository } from '../../src/store/pg/pg-opt-out-repository.js';
import { SqliteOptOutRepository } from '../../src/store/opt-out-repository.js';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
} from '../support/store-under-test.js';

interface StoreUnderTest {
  history: Async<CallHistory>;
  optOuts: Async<Pick<OptOutRepository, 'save' | 'get'>>;
  calls: Async<CallRepository>;
}

function sqliteStore(): StoreUnderTest {
  const db = sqliteDatabase();
  db.prepare(
    `INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x'), ('other', 'O', 'x')`,
  ).run();
  const calls = new SqliteCallRepository(db);
  const optOuts = new SqliteOptOutRepository(db);
  return {
    calls: promised(calls),
    optOuts: promised(optOuts),
    history: promised(new SqliteCallHistoryRepository(db, calls, optOuts)),
  };
}

const postgres = usePostgresServer();
const { pools } = postgres;

async function postgresStore(): Promise<StoreUnderTest> {
  const { pool } = await postgresDatabase(postgres.server, pools);
  await pool.query(
    `INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x'), ('other', 'O', 'x')`,
  );
  return {
    calls: new PgCallRepository(pool),
    optOuts: new PgOptOutRepository(pool),
    history: new PgCallHistoryRepository(pool),
  };
}

const T0 = '2026-03-01T10:00:00.000Z';
const t = (minutes: number): string => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const A = '+12125550001';
const B = '+12125550002';
const C = '+12125550003';

function record(id: string, extra: Partial<CallRecord> & { minute?: number } = {}): CallRecord {
  const { minute = 0, ...rest } = extra;
  return callRecordFixture({
    id,
    companyId: 'co',
    phoneNumber: A,
    createdAt: t(minute),
    modifiedAt: t(minute),
    ...rest,
  });
}

const ids = (records: CallRecord[]): string[] => records.map((r) => r.id);

describe.each([
  ['SQLite', async () => sqliteStore()],
  ['PostgreSQL', async () => postgresStore()],
] as const)('call history contract on %s', (_name, make) => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await make();
  });

  describe('openForNumber', () => {
    beforeEach(async () => {
      // r2 and r1 at the same instant (ties go by id); r3 has A as an alternate.
      await s.calls.insert(record('r2', { minute: 1, status: 'ringing' }));
      await s.calls.insert(record('r1', { minute: 1, status: 'scheduled' }));
      await s.calls.insert(
        record('r3', {
          minute: 0,
          status: 'in_call',
          phoneNumber: B,
          additionalPhoneNumbers: [A, C],
        }),
      );
      await s.calls.insert(record('r4', { minute: 2, status: 'failed' }));
      await s.calls.insert(record('x1', { companyId: 'other', status: 'ringing' }));
    });
    const open = ['scheduled', 'ringing', 'in_call'];

    it('finds the records that may dial the number, own or alternate, oldest first', async () => {
      expect(ids(await s.history.openForNumber('co', A, open))).toEqual(['r3', 'r1', 'r2']);
      expect(ids(await s.history.openForNumber('co', C, open))).toEqual(['r3']);
      expect(ids(await s.history.openForNumber('co', B, open))).toEqual(['r3']);
    });

    it('returns whole records, equal to the call repository’s', async () => {
      const [r3] = await s.history.openForNumber('co', C, open);
      expect(r3).toStrictEqual(await s.calls.getById('r3'));
    });

    it('keeps to the statuses asked for and the company', async () => {
      expect(ids(await s.history.openForNumber('co', A, ['failed']))).toEqual(['r4']);
      expect(await s.history.openForNumber('co', A, [])).toEqual([]);
      expect(ids(await s.history.openForNumber('other', A, open))).toEqual(['x1']);
      expect(await s.history.openForNumber('co', '+19999999999', open)).toEqual([]);
    });

    it('follows status changes; a changed primary number keeps the old one findable', async () => {
      await s.calls.update('r2', { status: 'busy' }, t(5));
      expect(ids(await s.history.openForNumber('co', A, open))).toEqual(['r3', 'r1']);
      await s.calls.update('r1', { phoneNumber: C }, t(6));
      // The index only ever adds numbers: r1 may have dialed A already.
      expect(ids(await s.history.openForNumber('co', A, open))).toEqual(['r3', 'r1']);
      expect(ids(await s.history.openForNumber('co', C, open))).toEqual(['r3', 'r1']);
    });

    it('indexes alternates as inserted, not as later patched', async () => {
      await s.calls.update('r4', { additionalPhoneNumbers: ['+12125550077'] }, t(5));
      expect(await s.history.openForNumber('co', '+12125550077', ['failed'])).toEqual([]);
    });
  });

  describe('touchedSince', () => {
    beforeEach(async () => {
      await s.calls.insert(record('r1', { minute: 0, status: 'answered' }));
      await s.calls.insert(record('r2', { minute: 1, status: 'busy' }));
      await s.calls.insert(
        record('r3', { minute: 2, status: 'failed', phoneNumber: C, additionalPhoneNumbers: [A] }),
      );
      await s.calls.insert(record('x1', { companyId: 'other', minute: 5 }));
    });

    it('finds records of the number changed at or after the instant, oldest first', async () => {
      expect(ids(await s.history.touchedSince('co', A, t(1)))).toEqual(['r2', 'r3']);
      expect(ids(await s.history.touchedSince('co', A, t(0)))).toEqual(['r1', 'r2', 'r3']);
      expect(await s.history.touchedSince('co', A, t(3))).toEqual([]);
      expect(ids(await s.history.touchedSince('co', C, t(0)))).toEqual(['r3']);
    });

    it('counts the last change, not the creation, and keeps to the company', async () => {
      await s.calls.update('r1', { summary: 'later' }, t(10));
      expect(ids(await s.history.touchedSince('co', A, t(10)))).toEqual(['r1']);
      expect(await s.history.touchedSince('other', A, t(6))).toEqual([]);
      expect(ids(await s.history.touchedSince('other', A, t(5)))).toEqual(['x1']);
    });
  });

  describe('latestWithAgentSince', () => {
    beforeEach(async () => {
      await s.calls.insert(record('r1', { minute: 0, agentId: 'a' }));
      await s.calls.insert(record('r2', { minute: 1, agentId: 'a' }));
      await s.calls.insert(record('r4', { minute: 2, agentId: 'a' }));
      await s.calls.insert(record('r3', { minute: 2, agentId: 'a' }));
      await s.calls.insert(record('r5', { minute: 3, agentId: 'b' }));
      await s.calls.insert(record('r6', { minute: 4, agentId: null }));
      await s.calls.insert(
        record('r7', { minute: 5, agentId: 'a', phoneNumber: C, additionalPhoneNumbers: [A] }),
      );
    });

    it('answers the newest record of the number and agent created after the instant', async () => {
      // r3 and r4 share the instant: the lower id wins, as in query().
      expect((await s.history.latestWithAgentSince('co', A, 'a', t(0)))?.id).toBe('r3');
      expect(await s.history.latestWithAgentSince('co', A, 'a', t(0))).toStrictEqual(
        await s.calls.getById('r3'),
      );
      expect((await s.history.latestWithAgentSince('co', A, 'b', t(0)))?.id).toBe('r5');
    });

    it('is strictly after the instant', async () => {
      expect(await s.history.latestWithAgentSince('co', A, 'a', t(2))).toBeUndefined();
      expect((await s.history.latestWithAgentSince('co', A, 'a', t(1)))?.id).toBe('r3');
    });

    it('a null agent matches only records without an agent', async () => {
      expect((await s.history.latestWithAgentSince('co', A, null, t(0)))?.id).toBe('r6');
      expect(await s.history.latestWithAgentSince('co', A, null, t(4))).toBeUndefined();
    });

    it('reads the primary number only, and keeps to the company', async () => {
      expect((await s.history.latestWithAgentSince('co', C, 'a', t(0)))?.id).toBe('r7');
      expect(await s.history.latestWithAgentSince('other', A, 'a', t(0))).toBeUndefined();
      expect(await s.history.latestWithAgentSince('co', A, 'z', t(0))).toBeUndefined();
    });
  });

  describe('numberFacts', () => {
    beforeEach(async () => {
      await s.calls.insert(record('r1', { minute: 0, status: 'ringing', agentId: 'a' }));
      await s.calls.insert(record('r2', { minute: 1, status: 'busy', agentId: 'a' }));
      await s.calls.insert(
        record('r3', {
          minute: 2,
          status: 'scheduled',
          phoneNumber: C,
          additionalPhoneNumbers: [A],
        }),
      );
      await s.calls.insert(
        record('x1', { companyId: 'other', minute: 3, status: 'ringing', agentId: 'b' }),
      );
      await s.optOuts.save({
        companyId: 'co',
        phoneNumber: A,
        permanent: false,
        blockedUntil: t(60),
        reason: null,
        source: null,
        createdAt: t(0),
      });
    });
    const q = {
      companyId: 'co',
      phoneNumber: A,
      agentId: 'a',
      openStatuses: ['ringing', 'scheduled'],
      agentSince: t(0),
      touchedSince: t(1),
    };

    it('answers the opt-out and the three reads, each as asked on its own', async () => {
      const facts = await s.history.numberFacts(q);
      expect(facts).toStrictEqual({
        optOut: await s.optOuts.get('co', A),
        open: await s.history.openForNumber('co', A, q.openStatuses),
        latestWithAgent: await s.history.latestWithAgentSince('co', A, 'a', t(0)),
        touched: await s.history.touchedSince('co', A, t(1)),
      });
      expect(facts.optOut?.blockedUntil).toBe(t(60));
      expect(ids(facts.open)).toEqual(['r1', 'r3']);
      expect(facts.latestWithAgent?.id).toBe('r2');
      expect(ids(facts.touched ?? [])).toEqual(['r2', 'r3']);
    });

    it('reads no changed records when no rule asks, and keeps to the company and number', async () => {
      const facts = await s.history.numberFacts({ ...q, touchedSince: null });
      expect(facts.touched).toBeNull();
      const other = await s.history.numberFacts({ ...q, companyId: 'other', agentId: null });
      expect(other.optOut).toBeUndefined();
      expect(ids(other.open)).toEqual(['x1']);
      expect(other.latestWithAgent).toBeUndefined();
      const unknown = await s.history.numberFacts({ ...q, phoneNumber: '+19999999999' });
      expect(unknown).toStrictEqual({
        optOut: undefined,
        open: [],
        latestWithAgent: undefined,
        touched: [],
      });
    });
  });
});
