// The daemon's PostgreSQL store (issue 27): the synchronous Store the calls
// domain uses, answered by the store worker on a real server. Two stores
// on one database stand for two daemons.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { CallRecord } from '../../src/model/call-record.js';
import { numberKey } from '../../src/model/serialization-keys.js';
import { openPgStore } from '../../src/store/pg/pg-store.js';
import { StoreError, StoreUnavailableError } from '../../src/store/pg/store-bridge.js';
import type { Store } from '../../src/store/store.js';
import { startPostgres, TestPools, type PostgresServer } from '../support/postgres.js';
import { postgresDatabase } from '../support/store-under-test.js';

let server: PostgresServer;
const pools = new TestPools();
const stores: Store[] = [];
const AT = '2026-11-25T10:00:00.000Z';

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const s of stores) s.close();
  await pools.end();
  await server?.stop();
});

async function twoNodes(): Promise<{ url: string; a: Store; b: Store }> {
  const { url } = await postgresDatabase(server, pools);
  const open = (nodeId: string) => {
    const s = openPgStore({ url, nodeId, poolMax: 4, timeoutMs: 10_000, clock: systemClock });
    stores.push(s);
    return s;
  };
  return { url, a: open('node-a'), b: open('node-b') };
}

function record(id: string, phoneNumber: string, status: CallRecord['status']): CallRecord {
  return {
    id,
    callId: `call-${id}`,
    companyId: 'co',
    phoneNumber,
    agentId: null,
    status,
    scheduledAt: null,
    createdAt: AT,
    modifiedAt: AT,
    retries: 0,
    maxRetries: 0,
  } as unknown as CallRecord;
}

function seed(s: Store): void {
  s.companies.insert({ id: 'co', name: 'co', parentId: null, settings: {}, createdAt: AT });
}

describe('PostgreSQL store through the worker', () => {
  it('answers the repositories synchronously, with what was written', async () => {
    const { a } = await twoNodes();
    seed(a);
    a.calls.insert(record('r1', '+12125550001', 'to_be_processed'));
    expect(a.calls.getById('r1')?.status).toBe('to_be_processed');
    const updated = a.calls.update('r1', { status: 'trying' }, AT, {
      onlyFrom: ['to_be_processed'],
    });
    expect(updated?.status).toBe('trying');
    expect(a.calls.update('r1', { status: 'trying' }, AT, { onlyFrom: ['scheduled'] })).toBe(
      undefined,
    );
    expect(a.calls.events('r1').map((e) => e.status)).toEqual(['to_be_processed', 'trying']);
  }, 30_000);

  it('an API key hash comes back a Buffer', async () => {
    const { a } = await twoNodes();
    seed(a);
    const hash = Buffer.from('0123456789abcdef0123456789abcdef');
    a.apiKeys.insert({
      id: 'k1',
      companyId: 'co',
      name: 'k',
      keyHash: hash,
      masked: 'gw_…abcd',
      fullAccess: true,
      groups: [],
      allowedIp: null,
      createdAt: AT,
      lastUsedAt: null,
    });
    const found = a.apiKeys.findByHash(hash);
    expect(Buffer.isBuffer(found?.keyHash)).toBe(true);
    expect(found?.keyHash.equals(hash)).toBe(true);
  }, 30_000);

  it('a unit of work commits together, or not at all when it throws', async () => {
    const { a, b } = await twoNodes();
    seed(a);
    expect(() =>
      a.unitOfWork.run(() => {
        a.calls.insert(record('r2', '+12125550002', 'to_be_processed'));
        throw new Error('no');
      }),
    ).toThrow('no');
    expect(b.calls.getById('r2')).toBe(undefined);
    a.unitOfWork.run(() => {
      a.calls.insert(record('r3', '+12125550003', 'to_be_processed'));
      // a nested unit of work that fails undoes its own writes only (a savepoint)
      expect(() =>
        a.unitOfWork.run(() => {
          a.calls.insert(record('r4', '+12125550004', 'to_be_processed'));
          throw new Error('inner');
        }),
      ).toThrow('inner');
    });
    expect(b.calls.getById('r3')?.id).toBe('r3');
    expect(b.calls.getById('r4')).toBe(undefined);
  }, 30_000);

  it('a database error arrives with its SQLSTATE', async () => {
    const { a } = await twoNodes();
    seed(a);
    a.calls.insert(record('r5', '+12125550005', 'to_be_processed'));
    let caught: unknown;
    try {
      a.calls.insert(record('r5', '+12125550005', 'to_be_processed'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(StoreError);
    expect((caught as StoreError).code).toBe('23505'); // unique_violation
  }, 30_000);

  it('records belong to the node that inserted them, and to the one that dials them', async () => {
    const { a, b } = await twoNodes();
    seed(a);
    a.calls.insert(record('r6', '+12125550006', 'in_call'));
    a.calls.insert(record('r7', '+12125550007', 'scheduled'));
    expect(a.calls.findByStatus(['in_call']).map((r) => r.id)).toEqual(['r6']);
    expect(b.calls.findByStatus(['in_call'])).toEqual([]);
    // b dials the scheduled call: from then on b recovers it, a does not
    b.calls.update('r7', { status: 'trying' }, AT, { onlyFrom: ['scheduled'] });
    expect(b.calls.findByStatus(['trying']).map((r) => r.id)).toEqual(['r7']);
    expect(a.calls.findByStatus(['trying'])).toEqual([]);
  }, 30_000);

  it("a live record adopted by another node is fenced off from its old owner's session writes", async () => {
    const { url, a, b } = await twoNodes();
    seed(a);
    a.calls.insert(record('r10', '+12125550010', 'to_be_processed'));
    expect(a.calls.update('r10', { status: 'trying' }, AT, { ownedOnly: true })?.status).toBe(
      'trying',
    );
    // b adopts it (as the reaper does, in its own transaction)
    await pools.open(url, 1).query(`UPDATE calls SET node_id = 'node-b' WHERE id = 'r10'`);
    expect(a.calls.update('r10', { totalCost: 1 }, AT, { ownedOnly: true })).toBe(undefined);
    expect(b.calls.update('r10', { totalCost: 2 }, AT, { ownedOnly: true })?.totalCost).toBe(2);
    // without ownedOnly (an API cancel, a reaper) and for a record that is not live, no fence
    a.calls.insert(record('r11', '+12125550011', 'scheduled'));
    expect(b.calls.update('r11', { status: 'trying' }, AT, { ownedOnly: true })?.status).toBe(
      'trying',
    );
  }, 30_000);

  it('a decision on one node sees the call another node committed for the number', async () => {
    const { a, b } = await twoNodes();
    seed(a);
    const key = numberKey('co', '+12125550008');
    // a holds the number's lock while b tries: b's transaction starts only after a commits.
    const order: string[] = [];
    a.unitOfWork.run(() => {
      order.push('a: decided');
      a.calls.insert(record('r8', '+12125550008', 'to_be_processed'));
    }, [key]);
    b.unitOfWork.run(() => {
      const open = b.callHistory.openForNumber('co', '+12125550008', ['to_be_processed']);
      order.push(`b: sees ${open.length}`);
    }, [key]);
    expect(order).toEqual(['a: decided', 'b: sees 1']);
  }, 30_000);

  it('a server that does not answer gives StoreUnavailableError, not a hang', async () => {
    const { url } = await postgresDatabase(server, pools);
    const s = openPgStore({
      url,
      nodeId: 'slow',
      poolMax: 2,
      timeoutMs: 1_000,
      clock: systemClock,
    });
    stores.push(s);
    seed(s);
    // Another session holds the number's lock; the unit of work waits for it past the timeout.
    const key = numberKey('co', '+12125550009');
    const blocker = await pools.open(url, 1).connect();
    await blocker.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    const started = Date.now();
    expect(() => s.unitOfWork.run(() => undefined, [key])).toThrow(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(5_000);
    await blocker.query('SELECT pg_advisory_unlock_all()');
    blocker.release();
    // the late answer of the timed-out call is not taken for the next one's
    expect(s.companies.get('co')?.id).toBe('co');
  }, 30_000);

  it("the CLI works on the daemons' database when store.url is set", async () => {
    const { url, pool } = await postgresDatabase(server, pools);
    const cli = (...args: string[]) =>
      promisify(execFile)('npx', ['tsx', 'src/cli.ts', ...args], {
        env: { ...process.env, GATEWAY_DATABASE_URL: url },
      });
    const created = JSON.parse((await cli('company', 'create', '--name', 'acme')).stdout) as {
      id: string;
    };
    const { rows } = await pool.query<{ name: string }>(
      'SELECT name FROM companies WHERE id = $1',
      [created.id],
    );
    expect(rows.map((r) => r.name)).toEqual(['acme']);
    const listed = JSON.parse((await cli('company', 'list')).stdout) as Array<{ name: string }>;
    expect(listed.map((c) => c.name)).toContain('acme');
  }, 60_000);
});
