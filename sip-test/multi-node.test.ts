// Three daemons on one PostgreSQL (issue 27): the real daemon started as the
// README says (npm start) with GATEWAY_DATABASE_URL, a throw-away server,
// and SIPp far ends counting the INVITEs that arrive per number.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINAL_STATUSES } from '../src/model/call-status.js';
import { startSipp } from './runner/sipp-runner.js';
import { BOOT_KEY, startGateway, type Gateway } from './support/gateway-harness.js';
import { startPostgres, TestPools, type PostgresServer } from './support/postgres.js';
import { postgresDatabase } from './support/store-under-test.js';

const FINAL = new Set<string>(FINAL_STATUSES);
let server: PostgresServer;
const pools = new TestPools();
const started: Gateway[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const g of started) await g.daemon.stop('SIGKILL');
  for (const g of started) await g.agentServer.close();
  await pools.end();
  await server?.stop();
}, 60_000);

/** Three daemons on a fresh database, started together (the bootstrap company is made once). */
async function cluster(
  env: Record<string, string> = {},
): Promise<{ nodes: Gateway[]; pool: pg.Pool }> {
  const { url, pool } = await postgresDatabase(server, pools);
  const nodes = await Promise.all(
    ['node-1', 'node-2', 'node-3'].map((id) =>
      startGateway({
        GATEWAY_DATABASE_URL: url,
        GATEWAY_NODE_ID: id,
        GATEWAY_CLUSTER_HEARTBEAT_SECONDS: '0.5',
        GATEWAY_CLUSTER_LOST_AFTER_SECONDS: '3',
        // the bursts below are the test, not overload: no shedding, no rate limit
        GATEWAY_HTTP_MAX_CALL_REQUESTS_IN_FLIGHT: '1000',
        GATEWAY_RATE_LIMIT_MAX: '100000',
        ...env,
      }),
    ),
  );
  started.push(...nodes);
  return { nodes, pool };
}

/** INVITEs per Request-URI user in a SIPp message log (retransmissions of one Call-ID once). */
function invitesPerNumber(messages: string): Map<string, number> {
  const seen = new Set<string>();
  const per = new Map<string, number>();
  for (const block of messages.split(/\n(?=INVITE sip:)/)) {
    const m = /^INVITE sip:\+?(\d+)@/m.exec(block);
    const callId = /^Call-ID:\s*(\S+)/im.exec(block)?.[1];
    if (!m || !callId || seen.has(callId)) continue;
    seen.add(callId);
    per.set(m[1]!, (per.get(m[1]!) ?? 0) + 1);
  }
  return per;
}

const number = (base: number, i: number) => `+1212${base}${String(i).padStart(4, '0')}`;

describe('three daemons on one PostgreSQL (issue 27)', () => {
  it('600 concurrent requests for 100 numbers over three daemons: one call per number, 409 for every duplicate, then 429 for all (cooldown), INVITEs counted at the far end', async () => {
    const { nodes, pool } = await cluster();
    const sipp = await startSipp({
      scenario: 'uas-200-bye-from-far-end.xml',
      calls: 100,
      timeoutSec: 90,
    });
    const trunk = await nodes[0]!.trunk(sipp.port);
    const numbers = Array.from({ length: 100 }, (_, i) => number(555, i));
    const request = (n: string, i: number, agentId = nodes[i % 3]!.agentId) =>
      nodes[i % 3]!.api('POST', '/api/v1/phones/calls/initiate-call', {
        agentId,
        destinationNumber: n,
        sipTrunkId: trunk,
        useAntiHarassmentProtection: true,
        overrideTimeRestriction: true,
        overrideDayRestriction: true,
        maxRetries: 0,
      });
    const wave = (agentId?: string) =>
      Promise.all(
        numbers.flatMap((n, k) => [0, 1, 2, 3, 4, 5].map((j) => request(n, k * 6 + j, agentId))),
      );

    const first = await wave();
    const byNumber = new Map<string, number[]>();
    first.forEach((r, i) => {
      const n = numbers[Math.floor(i / 6)]!;
      byNumber.set(n, [...(byNumber.get(n) ?? []), r.status]);
    });
    const wrong = [...byNumber].filter(
      ([, s]) => s.filter((x) => x === 200).length !== 1 || s.filter((x) => x === 409).length !== 5,
    );
    expect(wrong, 'numbers without exactly one 200 and five 409').toEqual([]);
    const codes = new Set(first.filter((r) => r.status === 409).map((r) => r.json.error));
    expect([...codes]).toEqual(['call_already_in_progress']);
    // every daemon accepted some
    const acceptedBy = [0, 1, 2].map(
      (d) => first.filter((r, i) => i % 3 === d && r.status === 200).length,
    );
    expect(
      acceptedBy.every((n) => n > 0),
      `accepted per daemon ${acceptedBy}`,
    ).toBe(true);

    // All 100 answered and hung up by the far end.
    const ids = first.filter((r) => r.status === 200).map((r) => r.json.callId as string);
    const end = Date.now() + 60_000;
    let statuses: string[] = [];
    while (Date.now() < end) {
      statuses = await Promise.all(ids.map(async (id) => (await nodes[0]!.get(id)).status));
      if (statuses.every((s) => FINAL.has(s))) break;
      await sleep(500);
    }
    expect(statuses.filter((s) => s !== 'answered')).toEqual([]);

    // A second wave, for another agent (the same agent within 60 s is a 409,
    // spec rule 5): every number is in its anti-harassment cooldown.
    const other = await nodes[1]!.api(
      'POST',
      '/api/v1/agents',
      { name: 'second-agent', websocketUrl: nodes[1]!.agentServer.url },
      BOOT_KEY,
    );
    expect(other.status).toBe(201);
    const second = await wave(other.json.id as string);
    const notRefused = second.filter(
      (r) => r.status !== 429 || r.json.error !== 'cooldown_period_active',
    );
    expect(
      notRefused.map((r) => [r.status, r.json.error]),
      'second wave: all 429 cooldown',
    ).toEqual([]);

    const result = await sipp.done;
    const invites = invitesPerNumber(result.messages);
    expect([...invites.values()].reduce((a, b) => a + b, 0)).toBe(100);
    expect(numbers.filter((n) => invites.get(n.slice(1)) !== 1)).toEqual([]);
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM calls');
    expect(rows[0]!.n).toBe(100);
  }, 180_000);
});
