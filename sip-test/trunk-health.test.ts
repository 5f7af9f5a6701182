// Issue 22: trunk health as an operator meets it, through the started daemon.
// OPTIONS pings only for trunks that ask (optionsPing), a fresh Call-ID per
// ping (RFC 3261 §8.1.1.4), `health` on every trunk in the API, the offline
// refusal saying why, one log line per change of state, gateway_trunk_up.
import { afterAll, describe, expect, it } from 'vitest';
import { allocatePort, startSipp, type SippProcess } from './runner/sipp-runner.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { SipResponder } from './support/sip-responder.js';

const sipps: SippProcess[] = [];
const responders: SipResponder[] = [];
const gateways: Gateway[] = [];
let n = 0;
const number = () => `+1212555${String(6100 + n++).padStart(4, '0')}`;

afterAll(async () => {
  for (const s of sipps) s.kill();
  for (const r of responders) r.close();
  for (const g of gateways) await g.stop();
});

/** T1 50 ms: Timer F, the wait of one ping, is 3.2 s; a ping every second. */
async function pingingGateway(): Promise<Gateway> {
  const gw = await startGateway({
    GATEWAY_SIP_T1_MS: '50',
    GATEWAY_SIP_OPTIONS_PING_SECONDS: '1',
    GATEWAY_RATE_LIMIT_MAX: '100000',
  });
  gateways.push(gw);
  return gw;
}

async function health(gw: Gateway, trunkId: string): Promise<any> {
  const res = await gw.api('GET', `/api/v1/phones/sip-trunks/${trunkId}`);
  expect(res.status).toBe(200);
  return res.json.health;
}

async function healthBecomes(gw: Gateway, trunkId: string, status: string): Promise<any> {
  const until = Date.now() + 15_000;
  for (;;) {
    const h = await health(gw, trunkId);
    if (h.status === status) return h;
    if (Date.now() > until) throw new Error(`trunk health stayed ${JSON.stringify(h)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('trunk health', () => {
  it('a pinged trunk answering OPTIONS is online (distinct Call-IDs), a dead one offline with lastError and refused with sip_trunk_offline, and it recovers', async () => {
    const gw = await pingingGateway();
    const far = await SipResponder.start({ kind: 'answer' });
    responders.push(far);
    const live = await gw.trunk(far.port, { optionsPing: true });
    const deadPort = await allocatePort();
    const dead = await gw.trunk(deadPort, { optionsPing: true });
    const quiet = await gw.trunk(await allocatePort());

    const up = await healthBecomes(gw, live, 'online');
    expect(up).toEqual({ status: 'online', checkedAt: expect.any(String), lastError: null });
    expect(Date.parse(up.checkedAt)).toBeGreaterThan(Date.now() - 60_000);
    const until = Date.now() + 10_000;
    while (far.received('OPTIONS').length < 3 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    const pings = far.received('OPTIONS');
    expect(pings.length).toBeGreaterThanOrEqual(3);
    expect(new Set(pings.map((p) => p.callId)).size).toBe(pings.length);

    const down = await healthBecomes(gw, dead, 'offline');
    expect(down).toEqual({
      status: 'offline',
      checkedAt: expect.any(String),
      lastError: 'no answer to OPTIONS within 3.2 s (Timer F)',
    });
    expect(await health(gw, quiet)).toEqual({
      status: 'unknown',
      checkedAt: null,
      lastError: null,
    });

    const refused = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
      agentId: gw.agentId,
      sipTrunkId: dead,
      destinationNumber: number(),
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
    });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      error: 'sip_trunk_offline',
      reason: expect.stringContaining(
        `(${dead}) is offline: it stopped answering OPTIONS pings: no answer to OPTIONS within 3.2 s (Timer F)`,
      ),
    });

    const metrics = await fetch(`${gw.daemon.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toContain(`gateway_trunk_up{trunk="${live}"} 1`);
    expect(metrics).toContain(`gateway_trunk_up{trunk="${dead}"} 0`);
    expect(metrics).not.toContain(`gateway_trunk_up{trunk="${quiet}"}`);

    // The far end comes back on the same address: online again, logged once as info.
    const back = await SipResponder.start({ kind: 'answer' }, deadPort);
    responders.push(back);
    await healthBecomes(gw, dead, 'online');

    const lines = gw.daemon
      .output()
      .split('\n')
      .filter((l) => l.includes(`"trunkId":"${dead}"`))
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, 'SIP trunk offline'],
      [30, 'SIP trunk online'],
    ]);
    expect(lines[0]).toMatchObject({ cause: 'timeout', lastError: down.lastError });
  }, 60_000);

  it('the default trunk offline: a call without sipTrunkId is refused with sip_trunk_offline, not "no trunk specified"', async () => {
    const gw = await pingingGateway();
    const trunk = await gw.trunk(await allocatePort(), { optionsPing: true, isDefault: true });
    await healthBecomes(gw, trunk, 'offline');
    const res = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
      agentId: gw.agentId,
      destinationNumber: number(),
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('sip_trunk_offline');
    expect(res.json.reason).toMatch(/no outbound route or default trunk is online/i);
  }, 40_000);

  it('a trunk that did not ask for pings gets none: a SIPp far end taking one call (-m 1) sees only the call', async () => {
    const gw = await startGateway({ GATEWAY_SIP_OPTIONS_PING_SECONDS: '1' });
    gateways.push(gw);
    const far = await startSipp({ scenario: 'uas-200-bye-from-far-end.xml', timeoutSec: 20 });
    sipps.push(far);
    const trunk = await gw.trunk(far.port);
    // Three ping intervals before the call: a ping would be the far end's one call.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await health(gw, trunk)).toEqual({
      status: 'unknown',
      checkedAt: null,
      lastError: null,
    });
    const callId = await gw.call(trunk, number());
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    const result = await far.done;
    expect(result.code, result.errors).toBe(0);
    expect(result.messages).toMatch(/^INVITE /m);
    expect(result.messages).not.toMatch(/^OPTIONS /m);
  }, 30_000);
});
