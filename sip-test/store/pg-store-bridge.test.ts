// The daemon's PostgreSQL store (issue 27): the synchronous Store the calls
// domain uses, answered by the store worker on a real server. Two stores
// on one database stand for two daemons.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { CallRecord } from '../../src/model/call-record.js';
import { numberKey } from '../../src/model/serialization-keys.js';
import { openPgStore, type PgStore } from '../../src/store/pg/pg-store.js';
import { StoreError, StoreUnavailableError } from '../../src/store/pg/store-bridge.js';
import type { Store } from '../../src/store/store.js';
import { threadCpuSeconds } from '../../src/thread-cpu.js';
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

  it("says which kernel thread is its worker (the daemon's CPU by thread), not the main one", async () => {
    const { a } = await twoNodes();
    const pa = a as PgStore;
    await until(() => pa.workerThreadId() !== null);
    expect(pa.workerThreadId()).not.toBe(process.pid);
    expect(threadCpuSeconds(pa.workerThreadId()!)).toBeGreaterThan(0);
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

describe('PostgreSQL store: posted steps, commits that do not block, cached configuration', () => {
  it('a posted write that fails fails its unit at the next wait, and nothing of the unit commits', async () => {
    const { a, b } = await twoNodes();
    seed(a);
    a.calls.insert(record('p1', '+12125550101', 'to_be_processed'));
    const codeOf = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (err) {
        return err instanceof StoreError ? err.code : String(err);
      }
      return undefined;
    };
    // The duplicate is posted; the read after it waits, and throws the duplicate's error.
    const atRead = codeOf(() =>
      a.unitOfWork.run(() => {
        a.calls.insert(record('p2', '+12125550102', 'to_be_processed'));
        a.calls.insert(record('p1', '+12125550101', 'to_be_processed'));
        a.calls.patch('p2', { status: 'trying' }, AT);
        return a.calls.getById('p2');
      }),
    );
    expect(atRead).toBe('23505');
    // Nothing waits after it: the commit does, and throws it.
    const atCommit = codeOf(() =>
      a.unitOfWork.run(() => {
        a.calls.insert(record('p3', '+12125550103', 'to_be_processed'));
        a.calls.insert(record('p1', '+12125550101', 'to_be_processed'));
      }),
    );
    expect(atCommit).toBe('23505');
    expect(b.calls.getById('p2')).toBe(undefined);
    expect(b.calls.getById('p3')).toBe(undefined);
    // A nested unit rolled back to its savepoint lets the outer one commit.
    a.unitOfWork.run(() => {
      a.calls.insert(record('p4', '+12125550104', 'to_be_processed'));
      expect(
        codeOf(() =>
          a.unitOfWork.run(() => {
            a.calls.insert(record('p1', '+12125550101', 'to_be_processed'));
            a.calls.getById('p1');
          }),
        ),
      ).toBe('23505');
    });
    expect(b.calls.getById('p4')?.id).toBe('p4');
    // The node goes on as before.
    expect(a.calls.getById('p1')?.id).toBe('p1');
  }, 30_000);

  it('runDurable settles once the writes are durable; the next unit for the number waits for that commit', async () => {
    const { a, b } = await twoNodes();
    seed(a);
    const number = '+12125550111';
    const key = numberKey('co', number);
    const first = a.unitOfWork.runDurable(() => {
      a.calls.insert(record('d1', number, 'to_be_processed'));
      return 'accepted';
    }, [key]);
    // Not awaited yet: the node goes on; a decision on the same number sees the first call.
    const seen = a.unitOfWork.run(
      () => a.callHistory.openForNumber('co', number, ['to_be_processed']).length,
      [key],
    );
    expect(seen).toBe(1);
    expect(await first).toBe('accepted');
    expect(b.calls.getById('d1')?.id).toBe('d1');
    // A failure of a posted write rejects the promise, and nothing of the unit commits.
    await expect(
      a.unitOfWork.runDurable(() => {
        a.calls.insert(record('d2', '+12125550112', 'to_be_processed'));
        a.calls.insert(record('d1', number, 'to_be_processed'));
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(b.calls.getById('d2')).toBe(undefined);
  }, 30_000);

  it("caches configuration reads until a daemon changes them; another daemon's change arrives by notification", async () => {
    const { url, a, b } = await twoNodes();
    seed(a);
    const pa = a as PgStore;
    await until(() => pa.hearsConfigChanges());
    const sql = pools.open(url, 1);
    // A change that announces nothing is not seen: the answer came from the cache. (The
    // seed's own notification may still be on its way and drop the entry: then again.)
    let heldBy = 0;
    for (let attempt = 1; attempt <= 5 && heldBy === 0; attempt++) {
      const before = a.companies.get('co')?.settings;
      await sql.query('ALTER TABLE companies DISABLE TRIGGER companies_config_changed');
      await sql.query(`UPDATE companies SET settings = $1 WHERE id = 'co'`, [{ silent: attempt }]);
      await sql.query('ALTER TABLE companies ENABLE TRIGGER companies_config_changed');
      if (JSON.stringify(a.companies.get('co')?.settings) === JSON.stringify(before))
        heldBy = attempt;
    }
    expect(heldBy).toBeGreaterThan(0);
    // Another daemon's change is announced and seen.
    b.companies.updateSettings('co', { fromB: true } as never);
    await until(() => (a.companies.get('co')?.settings as { fromB?: boolean }).fromB === true);
    // The node's own change is seen at once; callers get copies.
    a.companies.updateSettings('co', { fromA: true } as never);
    const read = a.companies.get('co')!;
    expect(read.settings).toEqual({ fromA: true });
    (read.settings as { fromA?: boolean }).fromA = false;
    expect(a.companies.get('co')?.settings).toEqual({ fromA: true });
    // Without the listening connection nothing cached is used; once it is back, nothing cached before is.
    await sql.query('ALTER TABLE companies DISABLE TRIGGER companies_config_changed');
    await sql.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'gateway node-a config'`,
    );
    await until(() => !pa.hearsConfigChanges());
    await sql.query(`UPDATE companies SET settings = '{"whileAway": 1}' WHERE id = 'co'`);
    expect(a.companies.get('co')?.settings).toEqual({ whileAway: 1 });
    await until(() => pa.hearsConfigChanges());
    expect(a.companies.get('co')?.settings).toEqual({ whileAway: 1 });
    await sql.query('ALTER TABLE companies ENABLE TRIGGER companies_config_changed');
  }, 30_000);
});

async function until(ok: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
