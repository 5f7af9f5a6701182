// Issue 7 through the started daemon with SIPp far ends: anti-harassment
// refusals after real calls, scheduled calls and retries dialed by the
// durable scheduler, and kill -9 with calls scheduled and claimed.
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { allocatePort, startSipp, type SippProcess } from './runner/sipp-runner.js';
import { finalResponseScenario } from './support/final-response-scenario.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

const sipps: SippProcess[] = [];
const gateways: Gateway[] = [];
let n = 0;
const number = () => `+1212555${String(6000 + n++).padStart(4, '0')}`;

afterAll(async () => {
  for (const s of sipps) s.kill();
  for (const g of gateways) await g.daemon.stop('SIGKILL');
});

async function gateway(env: Record<string, string> = {}): Promise<Gateway> {
  const gw = await startGateway({ GATEWAY_SCHEDULER_POLL_MS: '200', ...env });
  gateways.push(gw);
  return gw;
}

async function sipp(
  scenario: string,
  calls = 1,
  rtpEcho = false,
  extra: string[] = [],
): Promise<SippProcess> {
  const args = [...extra];
  if (rtpEcho) args.push('-mp', String(await allocatePort()), '-rtp_echo');
  const p = await startSipp({ scenario, calls, timeoutSec: 30, extraArgs: args });
  sipps.push(p);
  return p;
}

async function agent(gw: Gateway): Promise<string> {
  return (
    await gw.api('POST', '/api/v1/agents', { name: `a${n++}`, websocketUrl: gw.agentServer.url })
  ).json.id;
}

const protectedCall = (
  gw: Gateway,
  trunk: string,
  to: string,
  agentId: string,
  extra: Record<string, unknown> = {},
) =>
  gw.api('POST', '/api/v1/phones/calls/initiate-call', {
    destinationNumber: to,
    agentId,
    sipTrunkId: trunk,
    useAntiHarassmentProtection: true,
    overrideTimeRestriction: true,
    overrideDayRestriction: true,
    maxRetries: 0,
    ...extra,
  });

const count = (messages: string, method: string) =>
  (messages.match(new RegExp(`^${method} sip:`, 'gm')) ?? []).length;

describe('anti-harassment after real calls', () => {
  it('an answered call starts the cooldown: 429 with Retry-After, nextAllowedAt and lastCallAt', async () => {
    const gw = await gateway();
    const far = await sipp('uas-180-200-hold-bye-from-far-end.xml', 1, true, ['-d', '300']);
    const trunk = await gw.trunk(far.port);
    const to = number();
    const first = await protectedCall(gw, trunk, to, gw.agentId);
    expect(first.status).toBe(200);
    const rec = await gw.waitFor(first.json.callId);
    expect(rec.status).toBe('answered');
    // Another agent, so the 60-second duplicate rule (number + agent) does not answer first.
    const again = await protectedCall(gw, trunk, to, await agent(gw));
    expect(again.status).toBe(429);
    expect(again.json).toMatchObject({
      error: 'cooldown_period_active',
      httpStatus: 429,
      details: {
        retryable: true,
        lastCallAt: expect.any(String),
        nextAllowedAt: expect.any(String),
      },
    });
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(retryAfter).toBe(again.json.details.retryAfterSeconds);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(
      Date.parse(again.json.details.nextAllowedAt) - Date.parse(again.json.details.lastCallAt),
    ).toBe(3_600_000);
    // The same agent within 60 s is the duplicate rule instead.
    const dup = await protectedCall(gw, trunk, to, gw.agentId);
    expect(dup.status).toBe(409);
    expect(dup.json.error).toBe('call_already_in_progress');
    expect((await far.done).code).toBe(0);
  });

  it('three failed attempts (503) in a UTC day, then 429 failed_call_limit_reached', async () => {
    const gw = await gateway();
    const far = await sipp(
      finalResponseScenario(503, 'Service Unavailable', ['Reason: Q.850;cause=38']),
      3,
    );
    const trunk = await gw.trunk(far.port);
    const to = number();
    for (let i = 0; i < 3; i++) {
      const res = await protectedCall(gw, trunk, to, await agent(gw));
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect((await gw.waitFor(res.json.callId)).status).toBe('failed');
    }
    const fourth = await protectedCall(gw, trunk, to, await agent(gw));
    expect(fourth.status).toBe(429);
    expect(fourth.json).toMatchObject({
      error: 'failed_call_limit_reached',
      details: { retryable: true },
    });
    const next = new Date(
      Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
    ).toISOString();
    expect(fourth.json.details.nextAllowedAt).toBe(next);
    expect(Number(fourth.headers.get('retry-after'))).toBe(fourth.json.details.retryAfterSeconds);
    expect((await far.done).code).toBe(0);
  });
});

describe('durable scheduling', () => {
  it('a scheduled call due in a few seconds is dialed once, at its time', async () => {
    const gw = await gateway();
    const far = await sipp('uas-180-200-hold-bye-from-far-end.xml', 1, true, ['-d', '200']);
    const trunk = await gw.trunk(far.port);
    const due = new Date(Date.now() + 3000).toISOString();
    const res = await protectedCall(gw, trunk, number(), gw.agentId, { scheduledAt: due });
    expect(res.json).toMatchObject({
      scheduled: true,
      scheduleTime: due,
      reason: 'scheduled_at_requested',
    });
    expect((await gw.get(res.json.callId)).status).toBe('scheduled');
    const rec = await gw.waitFor(res.json.callId, undefined, 20_000);
    expect(rec.status).toBe('answered');
    expect(rec.attempts).toHaveLength(1);
    expect(Date.parse(rec.attempts[0].startedAt)).toBeGreaterThanOrEqual(Date.parse(due));
    const result = await far.done;
    expect(result.code).toBe(0);
    expect(count(result.messages, 'INVITE')).toBe(1);
  });

  it('a retry after 486 is dialed after retryDelayMinutes (scaled by the test knob)', async () => {
    // One "minute" of retryDelayMinutes is 100 ms here: 30 minutes → 3 s.
    const gw = await gateway({ GATEWAY_RETRY_DELAY_UNIT_MS: '100' });
    const far = await sipp(finalResponseScenario(486, 'Busy Here', ['Reason: Q.850;cause=17']), 2);
    const trunk = await gw.trunk(far.port);
    const res = await protectedCall(gw, trunk, number(), gw.agentId, {
      maxRetries: 2,
      retryDelayMinutes: 30,
      useAntiHarassmentProtection: false,
    });
    expect(res.status).toBe(200);
    await gw.waitFor(res.json.callId, 'scheduled', 10_000);
    const between = await gw.get(res.json.callId);
    expect(between).toMatchObject({ retries: 1, scheduledReason: 'retry', rescheduled: true });
    const rec = await gw.waitFor(res.json.callId, undefined, 20_000);
    expect(rec).toMatchObject({ status: 'busy', endCallReason: 'caller_busy', retries: 1 });
    expect(rec.attempts.map((a: any) => a.status)).toEqual(['busy', 'busy']);
    const gap = Date.parse(rec.attempts[1].startedAt) - Date.parse(rec.attempts[0].endedAt);
    expect(gap).toBeGreaterThanOrEqual(2900);
    expect(gap).toBeLessThan(8000);
    const result = await far.done;
    expect(result.code).toBe(0);
    expect(count(result.messages, 'INVITE')).toBe(2);
  }, 40_000);

  it('kill -9 with calls scheduled and one claimed mid-dial: after a restart each is dialed exactly once', async () => {
    const gw = await gateway();
    const far = await sipp('uas-180-200-hold-bye-from-far-end.xml', 2, true, ['-d', '200']);
    const trunk = await gw.trunk(far.port);
    const due = new Date(Date.now() + 4000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await protectedCall(gw, trunk, number(), gw.agentId, { scheduledAt: due })).json.callId,
      );
    }
    await gw.daemon.stop('SIGKILL');

    // The crash, as the store saw it: row 1 claimed by the dead daemon (lease
    // expired, INVITE never sent); row 2 dispatched, its record `trying` with
    // an attempt whose INVITE left (`inviteSentAt` committed); row 3 pending.
    const db = new Database(gw.daemon.dbPath);
    const rows = db
      .prepare(
        'SELECT s.id, c.call_id FROM schedules s JOIN calls c ON c.id = s.call_record_id ORDER BY s.id',
      )
      .all() as Array<{ id: number; call_id: string }>;
    expect(rows.map((r) => r.call_id)).toEqual(ids);
    db.prepare(
      "UPDATE schedules SET state = 'claimed', lease_owner = 'dead', lease_until = ?, claims = 1 WHERE id = ?",
    ).run(Date.now() - 1000, rows[0]!.id);
    db.prepare(
      "UPDATE schedules SET state = 'dispatched', lease_owner = 'dead', lease_until = ?, claims = 1 WHERE id = ?",
    ).run(Date.now() - 1000, rows[1]!.id);
    const sent = new Date().toISOString();
    db.prepare(
      `UPDATE calls SET status = 'trying', data = json_set(data, '$.attempts', json(?)) WHERE call_id = ?`,
    ).run(
      JSON.stringify([{ number: '+1', round: 1, startedAt: sent, inviteSentAt: sent }]),
      ids[1],
    );
    db.close();

    const again = await gateway({ GATEWAY_DB_PATH: gw.daemon.dbPath });
    const [a, b, c] = [
      await again.waitFor(ids[0]!, undefined, 20_000),
      await again.waitFor(ids[1]!, undefined, 20_000),
      await again.waitFor(ids[2]!, undefined, 20_000),
    ];
    expect(a.status).toBe('answered');
    expect(c.status).toBe('answered');
    // The one whose INVITE had left cannot be known to be live: finished, never dialed again.
    expect(b).toMatchObject({ status: 'failed', endCallReason: 'call_stuck' });
    const result = await far.done;
    expect(result.code).toBe(0);
    expect(count(result.messages, 'INVITE')).toBe(2);
    expect(a.attempts).toHaveLength(1);
    expect(c.attempts).toHaveLength(1);
  }, 60_000);
});
