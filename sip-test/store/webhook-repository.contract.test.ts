// The webhook repository's contract, once per store: SQLite (the embedded
// default) and PostgreSQL (a throw-away server). Endpoints, the outbox a
// call record's change writes, what the delivery worker is handed and
// writes back, manual retries, the backlog and pruning: the same answers,
// types and order on both. Then what only a server store faces: two daemons
// claiming the same due deliveries at once, each handed to exactly one.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import type { CallRecord } from '../../src/model/call-record.js';
import type { CallStatus } from '../../src/model/call-status.js';
import { callRecordFixture } from '../../src/model/test-support/call-record-fixture.js';
import type { WebhookEndpoint, WebhookEventType } from '../../src/model/webhook.js';
import type { Db } from '../../src/store/database.js';
import { PgWebhookRepository } from '../../src/store/pg/pg-webhook-repository.js';
import { SqliteWebhookRepository } from '../../src/store/webhook-repository.js';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
} from '../support/store-under-test.js';

/** The SQLite repository's public face, each method answering a promise. */
type Repo = ReturnType<typeof promised<SqliteWebhookRepository>>;

interface StoreUnderTest {
  repo: Repo;
  /** Runs `fn` on a repository inside a transaction, then rolls it back. */
  rolledBack(fn: (repo: Repo) => Promise<void>): Promise<void>;
  /** PostgreSQL claims what `due` hands out; SQLite only reads it (one worker per process). */
  claims: boolean;
}

interface StoreKind {
  open(): Promise<void>;
  /** An empty outbox and two companies, `co` and `other`. */
  fresh(): Promise<StoreUnderTest>;
}

const SEED = `INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x'), ('other', 'Other', 'x')`;

function seedSqlite(db: Db): void {
  db.prepare(SEED).run();
}

const sqlite: StoreKind = {
  open: async () => undefined,
  fresh: async () => {
    const db = sqliteDatabase();
    seedSqlite(db);
    const repo = promised(new SqliteWebhookRepository(db));
    return {
      repo,
      claims: false,
      rolledBack: async (fn) => {
        db.exec('BEGIN');
        try {
          await fn(repo);
        } finally {
          db.exec('ROLLBACK');
        }
      },
    };
  },
};

const pgServer = usePostgresServer();
const { pools } = pgServer;

function postgres(): StoreKind {
  let pool: pg.Pool;
  return {
    open: async () => {
      ({ pool } = await postgresDatabase(pgServer.server, pools));
    },
    fresh: async () => {
      await pool.query(`TRUNCATE webhook_deliveries, webhook_events, webhook_endpoints, companies
        RESTART IDENTITY CASCADE`);
      await pool.query(SEED);
      return {
        repo: new PgWebhookRepository(pool),
        claims: true,
        rolledBack: async (fn) => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            await fn(new PgWebhookRepository(client));
          } finally {
            await client.query('ROLLBACK');
            client.release();
          }
        },
      };
    },
  };
}

const T0 = '2026-06-10T15:00:00.000Z';
/** The instant `s` seconds after T0, as ISO text and as Unix ms. */
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();
const ms = (s: number) => Date.parse(T0) + s * 1000;

const endpointOf = (
  id: string,
  eventTypes: WebhookEventType[] = [],
  extra: Partial<WebhookEndpoint> = {},
): WebhookEndpoint => ({
  id,
  companyId: 'co',
  url: `https://hooks.example.com/${id}`,
  eventTypes,
  enabled: true,
  description: null,
  createdAt: T0,
  modifiedAt: T0,
  ...extra,
});
const secretOf = (id: string) => `whsec_${Buffer.from(id.padEnd(24, 'x')).toString('base64')}`;

const record = (id: string, status: CallStatus, companyId = 'co'): CallRecord =>
  callRecordFixture({ id, callId: `k-${id}`, companyId, phoneNumber: '+12125551234', status });

/** A call's status change written at T0 + `s` seconds (`from` undefined: the record's creation). */
async function change(
  repo: Repo,
  id: string,
  from: CallStatus | undefined,
  to: CallStatus,
  s: number,
): Promise<number> {
  return repo.recordCallChange(from && record(id, from), record(id, to), at(s));
}

/** A call's outcome as a promise: `promised` throws a SQLite error synchronously, PostgreSQL rejects. */
const settled = <T>(f: () => Promise<T>): Promise<T> => Promise.resolve().then(f);

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres()],
] as const)('webhook repository contract on %s', (_name, kind) => {
  let s: StoreUnderTest;
  let repo: Repo;
  beforeAll(async () => {
    await kind.open();
  }, 30_000);
  beforeEach(async () => {
    s = await kind.fresh();
    repo = s.repo;
  });

  const endpoint = (id: string, types: WebhookEventType[] = [], extra = {}) =>
    repo.insertEndpoint(endpointOf(id, types, extra), secretOf(id));
  /** An endpoint's event types, oldest delivery first. */
  const types = async (endpointId: string) =>
    (await repo.deliveries(endpointId, 100)).map((d) => d.eventType).reverse();
  const dueIds = async (nowMs: number, limit = 10) =>
    (await repo.due(nowMs, limit)).map((d) => d.id);

  describe('endpoints', () => {
    it('round-trip per company: arrays as arrays, booleans as booleans, null as null', async () => {
      const e = endpointOf('e1', ['call.ended', 'call.answered'], { enabled: false });
      expect(await repo.insertEndpoint(e, secretOf('e1'))).toStrictEqual(e);
      expect(await repo.getEndpoint('co', 'e1')).toStrictEqual(e);
      expect(await repo.getEndpoint('other', 'e1')).toBeUndefined();
      expect(await repo.getEndpoint('co', 'nope')).toBeUndefined();
      const described = endpointOf('e2', [], { description: 'CRM' });
      await repo.insertEndpoint(described, secretOf('e2'));
      expect(await repo.getEndpoint('co', 'e2')).toStrictEqual(described);
    });

    it('a second endpoint with the same id is refused', async () => {
      await endpoint('e1');
      await expect(settled(() => endpoint('e1'))).rejects.toThrow(/unique|duplicate/i);
    });

    it("list a company's own, oldest first, then by id in byte order", async () => {
      expect(await repo.listEndpoints('co')).toStrictEqual([]);
      await endpoint('late', [], { createdAt: at(5) });
      await endpoint('b');
      await endpoint('B');
      await repo.insertEndpoint(endpointOf('theirs', [], { companyId: 'other' }), secretOf('x'));
      expect((await repo.listEndpoints('co')).map((e) => e.id)).toEqual(['B', 'b', 'late']);
      expect(await repo.listEndpoints('other')).toStrictEqual([
        endpointOf('theirs', [], { companyId: 'other' }),
      ]);
    });

    it('an update merges the patch and stamps the change; an unknown endpoint is undefined', async () => {
      await endpoint('e1', ['call.ended']);
      const updated = await repo.updateEndpoint(
        'e1',
        { url: 'https://other.example.com/h', eventTypes: [], description: 'new' },
        at(9),
      );
      const expected = endpointOf('e1', [], {
        url: 'https://other.example.com/h',
        description: 'new',
        modifiedAt: at(9),
      });
      expect(updated).toStrictEqual(expected);
      expect(await repo.getEndpoint('co', 'e1')).toStrictEqual(expected);
      await repo.updateEndpoint('e1', { enabled: false, description: null }, at(10));
      expect(await repo.getEndpoint('co', 'e1')).toMatchObject({
        enabled: false,
        description: null,
        url: 'https://other.example.com/h',
        modifiedAt: at(10),
      });
      expect(await repo.updateEndpoint('nope', { enabled: false }, at(11))).toBeUndefined();
    });

    it('a rotated secret signs from now, the previous one until it expires', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await change(repo, 'c2', undefined, 'to_be_processed', 0);
      const [first] = await repo.due(ms(0), 1);
      expect(first!.secrets).toStrictEqual({
        current: secretOf('e1'),
        previous: null,
        previousExpiresAt: null,
      });
      await repo.markDelivered(first!.id, 200, at(1));
      await repo.rotateSecret('e1', 'whsec_new', at(3600), at(1));
      expect((await repo.getEndpoint('co', 'e1'))!.modifiedAt).toBe(at(1));
      const [second] = await repo.due(ms(0), 1);
      expect(second!.id).not.toBe(first!.id);
      expect(second!.secrets).toStrictEqual({
        current: 'whsec_new',
        previous: secretOf('e1'),
        previousExpiresAt: at(3600),
      });
    });

    it('a removed endpoint takes its deliveries, pending ones included; removing it again does nothing', async () => {
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await repo.removeEndpoint('e1');
      expect(await repo.getEndpoint('co', 'e1')).toBeUndefined();
      expect(await repo.deliveries('e1', 10)).toStrictEqual([]);
      expect(await repo.backlog(ms(0))).toStrictEqual({ pending: 1, oldestAgeSeconds: 0 });
      await expect(repo.removeEndpoint('e1')).resolves.toBeUndefined();
      expect((await repo.listEndpoints('co')).map((e) => e.id)).toEqual(['e2']);
    });
  });

  describe('the outbox', () => {
    it('writes one delivery per enabled endpoint of the company that subscribes to the type', async () => {
      await endpoint('all');
      await endpoint('ended-only', ['call.ended']);
      await endpoint('off', [], { enabled: false });
      await repo.insertEndpoint(endpointOf('theirs', [], { companyId: 'other' }), secretOf('t'));
      expect(await change(repo, 'c1', undefined, 'to_be_processed', 0)).toBe(1);
      expect(await change(repo, 'c1', 'to_be_processed', 'ringing', 2)).toBe(1);
      expect(await change(repo, 'c1', 'ringing', 'busy', 3)).toBe(2);
      expect(await types('all')).toEqual(['call.accepted', 'call.ringing', 'call.ended']);
      expect(await types('ended-only')).toEqual(['call.ended']);
      expect(await types('off')).toEqual([]);
      expect(await types('theirs')).toEqual([]);
    });

    it('writes nothing without endpoints, or for a change that reports nothing', async () => {
      expect(await change(repo, 'c1', undefined, 'to_be_processed', 0)).toBe(0);
      await endpoint('e1');
      expect(await change(repo, 'c1', 'ringing', 'ringing', 1)).toBe(0);
      expect(await repo.backlog(ms(1))).toStrictEqual({ pending: 0, oldestAgeSeconds: 0 });
    });

    it('tells onWritten when it wrote deliveries, and only then', async () => {
      let told = 0;
      repo.onWritten = () => told++;
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      expect(told).toBe(0);
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await change(repo, 'c1', 'ringing', 'ringing', 1);
      expect(told).toBe(1);
    });

    it('a change that rolls back leaves no event behind', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await s.rolledBack(async (tx) => {
        expect(await change(tx, 'c1', 'to_be_processed', 'ringing', 1)).toBe(1);
      });
      expect(await types('e1')).toEqual(['call.accepted']);
      expect(await repo.backlog(ms(1))).toMatchObject({ pending: 1 });
    });

    it('lists deliveries newest first, each as the API shows it; one by id, within its endpoint', async () => {
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await change(repo, 'c1', 'to_be_processed', 'ringing', 2);
      const listed = await repo.deliveries('e1', 10);
      expect(listed.map((d) => d.id)).toEqual(['3', '1']);
      expect(listed[1]).toStrictEqual({
        id: '1',
        endpointId: 'e1',
        eventId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        eventType: 'call.accepted',
        callId: 'k-c1',
        status: 'pending',
        attempts: 0,
        lastResponseCode: null,
        lastError: null,
        nextAttemptAt: T0,
        createdAt: T0,
        deliveredAt: null,
      });
      // One event per change, whatever the number of endpoints.
      expect((await repo.deliveries('e2', 10)).map((d) => d.eventId)).toEqual(
        listed.map((d) => d.eventId),
      );
      expect(await repo.deliveries('e1', 1)).toStrictEqual([listed[0]]);
      expect(await repo.deliveries('e1', 0)).toStrictEqual([]);
      expect(await repo.deliveries('e1', -1)).toStrictEqual(listed);
      expect(await repo.deliveries('nope', 10)).toStrictEqual([]);
      expect(await repo.delivery('e1', '1')).toStrictEqual(listed[1]);
      expect(await repo.delivery('e2', '1')).toBeUndefined();
      expect(await repo.delivery('e1', '99')).toBeUndefined();
      expect(await repo.delivery('e1', 'x; DROP')).toBeUndefined();
      expect(await repo.delivery('e1', '1234567890123456')).toBeUndefined();
    });
  });

  describe('the delivery worker', () => {
    it('is handed what is due, oldest due first, with what it needs to send it', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 2);
      await change(repo, 'c2', undefined, 'to_be_processed', 1);
      await change(repo, 'c3', undefined, 'to_be_processed', 1);
      expect(await repo.due(ms(0), 10)).toStrictEqual([]);
      const due = await repo.due(ms(5), 10);
      expect(due.map((d) => d.id)).toEqual(['2', '3', '1']);
      const [listed] = await repo.deliveries('e1', 1); // delivery 3
      expect(due[1]).toStrictEqual({
        id: '3',
        endpointId: 'e1',
        url: 'https://hooks.example.com/e1',
        eventId: listed!.eventId,
        body: expect.any(String),
        attempts: 0,
        createdAt: at(1),
        secrets: { current: secretOf('e1'), previous: null, previousExpiresAt: null },
      });
      expect(JSON.parse(due[1]!.body)).toStrictEqual({
        id: listed!.eventId,
        type: 'call.accepted',
        timestamp: at(1),
        companyId: 'co',
        callId: 'k-c3',
        data: { call: expect.objectContaining({ callId: 'k-c3', status: 'to_be_processed' }) },
      });
    });

    it('is handed at most `limit`', async () => {
      await endpoint('e1');
      for (const id of ['c1', 'c2', 'c3']) await change(repo, id, undefined, 'to_be_processed', 0);
      expect(await dueIds(ms(0), 0)).toEqual([]);
      expect(await dueIds(ms(0), 2)).toEqual(['1', '2']);
      await repo.markRetry('1', 503, 'HTTP 503', ms(60));
      await repo.markRetry('2', 503, 'HTTP 503', ms(60));
      // A negative limit is no limit, as SQLite reads it.
      expect(await dueIds(ms(60), -1)).toEqual(['3', '1', '2']);
    });

    it("hands out a call's deliveries to an endpoint one at a time, in order; other calls' alongside", async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0); // 1
      await change(repo, 'c1', 'to_be_processed', 'ringing', 1); // 2
      await change(repo, 'c1', 'ringing', 'busy', 2); // 3
      await change(repo, 'c2', undefined, 'to_be_processed', 1); // 4
      expect(await dueIds(ms(5))).toEqual(['1', '4']);
      // Retried later: the call's next event waits for it.
      await repo.markRetry('1', 503, 'HTTP 503', ms(60));
      await repo.markDelivered('4', 200, at(6));
      expect(await dueIds(ms(5))).toEqual([]);
      expect(await dueIds(ms(60))).toEqual(['1']);
      await repo.markDelivered('1', 200, at(61));
      expect(await dueIds(ms(61))).toEqual(['2']);
      // A failed one no longer holds the call's next events back.
      await repo.markFailed('2', 410, 'HTTP 410');
      expect(await dueIds(ms(61))).toEqual(['3']);
    });

    it("each endpoint receives a call's events in its own order", async () => {
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 0); // 1 (e1), 2 (e2)
      await change(repo, 'c1', 'to_be_processed', 'ringing', 1); // 3 (e1), 4 (e2)
      expect(await dueIds(ms(5))).toEqual(['1', '2']);
      await repo.markDelivered('2', 200, at(6));
      await repo.markRetry('1', 0, 'ECONNREFUSED', ms(30));
      expect(await dueIds(ms(6))).toEqual(['4']);
    });

    it('writes outcomes: delivered, retried later, failed; a finished one is not written again', async () => {
      await endpoint('e1');
      for (const id of ['c1', 'c2', 'c3']) await change(repo, id, undefined, 'to_be_processed', 0);
      expect(await dueIds(ms(0))).toEqual(['1', '2', '3']);
      await repo.markDelivered('1', 204, at(1));
      await repo.markRetry('2', 429, null, ms(40));
      await repo.markFailed('3', 0, 'destination refused');
      const byId = async (id: string) => repo.delivery('e1', id);
      expect(await byId('1')).toMatchObject({
        status: 'delivered',
        attempts: 1,
        lastResponseCode: 204,
        lastError: null,
        nextAttemptAt: null,
        deliveredAt: at(1),
      });
      expect(await byId('2')).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastResponseCode: 429,
        lastError: null,
        nextAttemptAt: at(40),
        deliveredAt: null,
      });
      expect(await byId('3')).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastResponseCode: 0,
        lastError: 'destination refused',
        nextAttemptAt: null,
      });
      // Again on finished ones: nothing changes.
      await repo.markDelivered('3', 200, at(2));
      await repo.markFailed('1', 500, 'late');
      await repo.markRetry('1', 500, 'late', ms(50));
      expect(await byId('1')).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(await byId('3')).toMatchObject({ status: 'failed', attempts: 1 });
      // A second retry counts its attempt; the last error is replaced.
      expect(await dueIds(ms(40))).toEqual(['2']);
      await repo.markRetry('2', 503, 'HTTP 503', ms(80));
      expect(await byId('2')).toMatchObject({
        attempts: 2,
        lastResponseCode: 503,
        lastError: 'HTTP 503',
        nextAttemptAt: at(80),
      });
    });

    it('outcomes for unknown or malformed ids change nothing', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      for (const id of ['99', 'x', '1 OR 1=1', '']) {
        await repo.markDelivered(id, 200, at(1));
        await repo.markRetry(id, 500, 'e', ms(9));
        await repo.markFailed(id, 500, 'e');
        await repo.retryNow(id, ms(9));
      }
      expect(await repo.delivery('e1', '1')).toMatchObject({ status: 'pending', attempts: 0 });
      expect(await dueIds(ms(0))).toEqual(['1']);
    });

    it('a disabled endpoint is passed over until enabled again', async () => {
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await repo.updateEndpoint('e1', { enabled: false }, at(1));
      expect(await dueIds(ms(5))).toEqual(['2']);
      await repo.markDelivered('2', 200, at(5));
      await repo.updateEndpoint('e1', { enabled: true }, at(2));
      expect(await dueIds(ms(5))).toEqual(['1']);
    });

    it('a manual retry sends a finished delivery again from the given time', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      await change(repo, 'c2', undefined, 'to_be_processed', 0);
      expect(await dueIds(ms(5))).toEqual(['1', '2']);
      await repo.markDelivered('1', 204, at(6));
      await repo.markFailed('2', 410, 'HTTP 410');
      await repo.retryNow('1', ms(8));
      await repo.retryNow('2', ms(7));
      expect(await repo.delivery('e1', '1')).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: at(8),
        deliveredAt: null,
        lastResponseCode: 204,
      });
      expect(await dueIds(ms(7))).toEqual(['2']);
      await repo.markDelivered('2', 200, at(7));
      expect(await dueIds(ms(8))).toEqual(['1']);
    });

    it('the backlog counts pending deliveries and the age of the oldest event', async () => {
      expect(await repo.backlog(ms(0))).toStrictEqual({ pending: 0, oldestAgeSeconds: 0 });
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 2);
      await change(repo, 'c2', undefined, 'to_be_processed', 4);
      expect(await repo.backlog(ms(7.5))).toStrictEqual({ pending: 4, oldestAgeSeconds: 5.5 });
      // Never negative, and a disabled endpoint's deliveries still count.
      await repo.updateEndpoint('e2', { enabled: false }, at(5));
      expect(await repo.backlog(ms(0))).toStrictEqual({ pending: 4, oldestAgeSeconds: 0 });
      expect(await dueIds(ms(10))).toEqual(['1', '3']);
      await repo.markDelivered('1', 200, at(10));
      await repo.markFailed('3', 410, 'HTTP 410');
      expect(await repo.backlog(ms(10))).toStrictEqual({ pending: 2, oldestAgeSeconds: 8 });
    });

    it('pruning deletes finished deliveries and unneeded events written before the cut, keeps the pending', async () => {
      await endpoint('e1');
      await endpoint('e2');
      await change(repo, 'c1', undefined, 'to_be_processed', 0); // event A: 1 (e1), 2 (e2)
      await change(repo, 'c2', undefined, 'to_be_processed', 0); // event B: 3 (e1), 4 (e2)
      await change(repo, 'c3', undefined, 'to_be_processed', 100); // event C: 5 (e1), 6 (e2)
      expect(await dueIds(ms(100))).toEqual(['1', '2', '3', '4', '5', '6']);
      for (const id of ['1', '2', '3', '5', '6']) await repo.markDelivered(id, 200, at(101));
      expect(await repo.prune(at(50))).toStrictEqual({ deliveries: 3, events: 1 });
      expect((await repo.deliveries('e1', 10)).map((d) => d.id)).toEqual(['5']);
      expect((await repo.deliveries('e2', 10)).map((d) => d.id)).toEqual(['6', '4']);
      expect(await repo.prune(at(50))).toStrictEqual({ deliveries: 0, events: 0 });
      // A removed endpoint's events are pruned once no delivery needs them.
      await repo.removeEndpoint('e2');
      expect(await repo.prune(at(50))).toStrictEqual({ deliveries: 0, events: 1 });
      expect(await repo.prune(at(200))).toStrictEqual({ deliveries: 1, events: 1 });
      expect(await repo.deliveries('e1', 10)).toStrictEqual([]);
    });

    it('hands out a delivery not yet answered again only where due() reads (SQLite), not where it claims (PostgreSQL)', async () => {
      await endpoint('e1');
      await change(repo, 'c1', undefined, 'to_be_processed', 0);
      expect(await dueIds(ms(1))).toEqual(['1']);
      // SQLite: one worker per process, which skips the ids it has in flight.
      // PostgreSQL: claimed until the lease runs out (pg-only suite below).
      expect(await dueIds(ms(1))).toEqual(s.claims ? [] : ['1']);
      await repo.markRetry('1', 503, 'HTTP 503', ms(30));
      expect(await dueIds(ms(30))).toEqual(['1']);
    });
  });
});

describe('PostgreSQL: claims of due deliveries', () => {
  let pool: pg.Pool;
  let url: string;
  beforeAll(async () => {
    ({ pool, url } = await postgresDatabase(pgServer.server, pools));
  }, 30_000);
  beforeEach(async () => {
    await pool.query(`TRUNCATE webhook_deliveries, webhook_events, webhook_endpoints, companies
      RESTART IDENTITY CASCADE`);
    await pool.query(SEED);
  });

  it('a claimed delivery comes back to any daemon once its lease ran out (its claimer died mid-send)', async () => {
    const a = new PgWebhookRepository(pool, { claimLeaseMs: 30_000 });
    const b = new PgWebhookRepository(pool, { claimLeaseMs: 30_000 });
    await a.insertEndpoint(endpointOf('e1'), secretOf('e1'));
    await a.recordCallChange(undefined, record('c1', 'to_be_processed'), at(0));
    await a.recordCallChange(record('c1', 'to_be_processed'), record('c1', 'ringing'), at(1));
    expect((await a.due(ms(5), 10)).map((d) => d.id)).toEqual(['1']);
    expect(await b.due(ms(34), 10)).toEqual([]);
    // Still pending while claimed: the call's next event keeps waiting.
    expect(await a.delivery('e1', '1')).toMatchObject({ status: 'pending', nextAttemptAt: at(35) });
    const again = await b.due(ms(35), 10);
    expect(again.map((d) => [d.id, d.attempts])).toEqual([['1', 0]]);
    await b.markDelivered('1', 200, at(36));
    expect((await a.due(ms(36), 10)).map((d) => d.id)).toEqual(['2']);
  });

  it('two daemons claiming the same due deliveries at once never get the same delivery twice', async () => {
    const setup = new PgWebhookRepository(pool);
    await setup.insertEndpoint(endpointOf('e1'), secretOf('e1'));
    await setup.insertEndpoint(endpointOf('e2'), secretOf('e2'));
    const calls = 100;
    for (let i = 1; i <= calls; i++) {
      await setup.recordCallChange(undefined, record(`c${i}`, 'to_be_processed'), at(0));
      await setup.recordCallChange(
        record(`c${i}`, 'to_be_processed'),
        record(`c${i}`, 'ringing'),
        at(1),
      );
    }
    // Two daemons, each with its own pool, each running five passes at once,
    // answering every delivery it is handed, until nothing is due.
    const daemons = ['node-1', 'node-2'].map((node) => ({
      node,
      repo: new PgWebhookRepository(pools.open(url, 6)),
    }));
    const claimedBy = new Map<string, string[]>();
    const events: Array<{ what: 'claimed' | 'answering'; id: string }> = [];
    await Promise.all(
      daemons.flatMap(({ node, repo }) =>
        Array.from({ length: 5 }, async () => {
          for (;;) {
            const due = await repo.due(ms(5), 7);
            if (due.length === 0) return;
            for (const d of due) {
              (claimedBy.get(d.id) ?? claimedBy.set(d.id, []).get(d.id)!).push(node);
              events.push({ what: 'claimed', id: d.id });
            }
            for (const d of due) {
              events.push({ what: 'answering', id: d.id });
              await repo.markDelivered(d.id, 200, at(6));
            }
          }
        }),
      ),
    );
    // Each of the 400 deliveries handed out exactly once, all delivered.
    expect(claimedBy.size).toBe(calls * 4);
    expect([...claimedBy.values()].filter((nodes) => nodes.length !== 1)).toEqual([]);
    expect(await setup.backlog(ms(6))).toStrictEqual({ pending: 0, oldestAgeSeconds: 0 });
    // A call's ringing was handed out for an endpoint only after its accepted
    // had been handed out and was being answered (no daemon got both at once).
    const rows = await pool.query<{ id: string; endpoint_id: string; record_id: string }>(
      'SELECT id, endpoint_id, record_id FROM webhook_deliveries ORDER BY id',
    );
    const position = (what: 'claimed' | 'answering', id: string) =>
      events.findIndex((e) => e.what === what && e.id === id);
    const firstOf = new Map<string, string>();
    for (const r of rows.rows) {
      const key = `${r.endpoint_id}/${r.record_id}`;
      const first = firstOf.get(key);
      if (first === undefined) firstOf.set(key, r.id);
      else expect(position('answering', first)).toBeLessThan(position('claimed', r.id));
    }
  }, 60_000);
});
