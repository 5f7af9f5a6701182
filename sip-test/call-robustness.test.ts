// Issue 21 (docs/decisions/dial-path.md, "A session that throws", "One
// writer per live call"): an exception inside a call session still ends its
// record at once, frees the number and closes the media session; a live
// record shows who is on the call, and the hangup API answers with the
// record as it ended.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { SipResponder } from './support/sip-responder.js';
import { FINAL_STATUSES } from '../src/model/call-status.js';

const farEnds = new FarEnds();
const responders: SipResponder[] = [];
const gateways: Gateway[] = [];
let n = 0;
// New York numbers of this file (+1 212 555 03xx), one per test.
const number = () => `+1212555${String(310 + n++).padStart(4, '0')}`;

afterAll(async () => {
  farEnds.killAll();
  for (const r of responders) r.close();
  for (const g of gateways) await g.stop();
});

/** A daemon of its own per group, so one that dies takes no other test with it. */
function ownGateway(): () => Gateway {
  let gw: Gateway | undefined;
  beforeAll(async () => {
    gw = await startGateway({ GATEWAY_RATE_LIMIT_MAX: '100000' });
    gateways.push(gw);
  }, 30_000);
  return () => gw!;
}

/** Runs `fn`; when the daemon cannot be reached, the error carries the end of its log. */
async function reaching<T>(gw: Gateway, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (gw.daemon.child.exitCode === null && !/fetch failed/.test(String(err))) throw err;
    throw new Error(
      `daemon unreachable (exit code ${gw.daemon.child.exitCode}): ${String(err)}\n` +
        `its log ends:\n${gw.daemon.output().slice(-4000)}`,
    );
  }
}

const FINAL = new Set<string>(FINAL_STATUSES);

/** The record as soon as it is final, or as it still is when `ms` have passed. */
async function recordAfter(gw: Gateway, callId: string, ms: number): Promise<any> {
  const until = Date.now() + ms;
  for (;;) {
    const rec = await reaching(gw, () => gw.get(callId));
    if (FINAL.has(rec.status) || Date.now() > until) return rec;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function gauges(gw: Gateway): Promise<Record<string, number>> {
  const text = await reaching(gw, async () => (await fetch(`${gw.daemon.baseUrl}/metrics`)).text());
  const value = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  };
  return {
    gateway_media_sessions: value('gateway_media_sessions'),
    gateway_calls_live: value('gateway_calls_live'),
  };
}

describe('a session that throws', () => {
  const daemon = ownGateway();
  it('a trunk header the SIP stack refuses (CR/LF) ends the call failed / failed_to_connect at once, frees the number and its media session', async () => {
    const gw = daemon();
    const far = await SipResponder.start({ kind: 'silent' });
    responders.push(far);
    const trunk = await gw.trunk(far.port, { headers: { 'X-Campaign': 'spring' } });
    // The API will refuse CR/LF in a header value; a value stored before
    // that (or written by other means) reaches the dialer as it is.
    const db = new Database(gw.daemon.dbPath, { timeout: 5000 });
    try {
      const changed = db
        .prepare(
          "UPDATE documents SET data = json_set(data, '$.headers', json(?)) WHERE kind = 'sip_trunk' AND id = ?",
        )
        .run(JSON.stringify({ 'X-Campaign': 'spring\r\nX-Injected: yes' }), trunk).changes;
      expect(changed).toBe(1);
    } finally {
      db.close();
    }
    const stored = await gw.api('GET', `/api/v1/phones/sip-trunks/${trunk}`);
    expect(stored.json.headers).toEqual({ 'X-Campaign': 'spring\r\nX-Injected: yes' });

    const to = number();
    const callId = await gw.call(trunk, to);
    const rec = await recordAfter(gw, callId, 2000);
    expect
      .soft({ status: rec.status, endCallReason: rec.endCallReason, endDetail: rec.endDetail })
      .toEqual({
        status: 'failed',
        endCallReason: 'failed_to_connect',
        endDetail: 'session_error',
      });

    // The number is free again: a new call to it (another agent, so the
    // 60-second rule for number + agent does not apply) is accepted.
    const other = await gw.api('POST', '/api/v1/agents', {
      name: 'second',
      websocketUrl: gw.agentServer.url,
    });
    const again = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
      destinationNumber: to,
      agentId: other.json.id,
      sipTrunkId: trunk,
      useAntiHarassmentProtection: false,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
      maxRetries: 0,
    });
    expect.soft(again.status, JSON.stringify(again.json)).toBe(200);
    if (again.status === 200) await recordAfter(gw, again.json.callId, 2000);

    // Nothing is left open: no media session, no live call.
    let seen = await gauges(gw);
    const until = Date.now() + 3000;
    while (
      (seen.gateway_media_sessions !== 0 || seen.gateway_calls_live !== 0) &&
      Date.now() < until
    ) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await gauges(gw);
    }
    expect(seen).toEqual({ gateway_media_sessions: 0, gateway_calls_live: 0 });
  });
});

describe('the live record', () => {
  const daemon = ownGateway();
  it('while in_call the agent and the callee show as joined; the hangup API answers with the ended record (answered / user_hungup, both left)', async () => {
    const gw = daemon();
    const sipp = await farEnds.start('uas-200-wait-bye-from-us.xml', { rtpEcho: true });
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const live = await gw.waitFor(callId, 'in_call');
    const ai = (r: any) => r.participants.find((p: any) => p.type === 'ai');
    const callee = (r: any) => r.participants.find((p: any) => p.type === 'trunk');

    expect.soft(ai(live)).toMatchObject({ status: 'joined', joinedAt: expect.any(String) });
    expect
      .soft(
        Math.abs(Date.parse(ai(live)?.joinedAt) - Date.parse(live.startAt)),
        'the agent joined at the answer',
      )
      .toBeLessThanOrEqual(2000);
    expect.soft(ai(live)?.leftAt).toBeUndefined();
    expect.soft(callee(live)).toMatchObject({ status: 'joined', joinedAt: live.startAt });

    const res = await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    expect(res.status).toBe(200);
    expect.soft(res.json).toMatchObject({
      status: 'answered',
      endCallReason: 'user_hungup',
      active: false,
      endAt: expect.any(String),
    });
    const ended = res.json;
    expect.soft(ai(ended)).toMatchObject({ status: 'left', leftAt: expect.any(String) });
    expect.soft(callee(ended)).toMatchObject({ status: 'left', leftAt: expect.any(String) });

    // And the stored record says the same.
    const stored = await gw.waitFor(callId);
    expect(stored).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect(ai(stored)).toMatchObject({ status: 'left', joinedAt: expect.any(String) });
    expect((await sipp.done).code).toBe(0);
  });
});
