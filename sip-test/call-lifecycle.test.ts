// Issue 5: the started daemon dials SIPp far ends through the HTTP API and
// the record read back with GET tells what happened.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { finalResponseScenario } from './support/final-response-scenario.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

let gw: Gateway;
let n = 0;
const number = () => `+1212555${String(3000 + n++).padStart(4, '0')}`;

const farEnds = new FarEnds();
const farEnd = (
  scenario: string,
  keys: Record<string, string> = {},
  rtpEcho = false,
  timeoutSec = 20,
  calls = 1,
) => farEnds.start(scenario, { keys, rtpEcho, timeoutSec, calls });

beforeAll(async () => {
  gw = await startGateway({}, { outgoing: { ringTimeoutSeconds: 3, maxDurationSeconds: 4 } });
}, 30_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
});

describe('call lifecycle against SIPp', () => {
  it('answered, then far-end BYE: answered / caller_hungup with duration, participants and networkQuality', async () => {
    const sipp = await farEnd('uas-180-200-hold-bye-from-far-end.xml', { '-d': '1500' }, true);
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({
      status: 'answered',
      endCallReason: 'caller_hungup',
      callDirection: 'outbound',
      source: 'api',
      hertz: 8000,
      active: false,
    });
    expect(rec.duration).toBeGreaterThanOrEqual(1);
    expect(rec.duration).toBeLessThanOrEqual(3);
    expect(Date.parse(rec.endAt) - Date.parse(rec.startAt)).toBeGreaterThanOrEqual(1200);
    expect(rec.sipFailure).toBeUndefined();
    const trunkLeg = rec.participants.find((p: any) => p.type === 'trunk');
    expect(trunkLeg).toMatchObject({
      status: 'left',
      codec: 'PCMU',
      hertz: 8000,
      remoteAddress: '127.0.0.1',
      callId: expect.any(String),
    });
    expect(trunkLeg.joinedAt).toBe(rec.startAt);
    expect(trunkLeg.leftAt).toBe(rec.endAt);
    // SIPp echoed our 20 ms frames back: about 50 per second for ~1.5 s.
    expect(rec.networkQuality.packetsReceived).toBeGreaterThan(40);
    expect(rec.networkQuality.lossPct).toBeLessThan(5);
    expect(rec.rtpPort).toEqual(expect.any(Number));
    const history = rec.attempts.map((a: any) => a.status);
    expect(history).toEqual(['answered']);
  });

  it('hangup via the API before the answer: CANCEL → cancelled', async () => {
    const sipp = await farEnd('uas-180-cancel-487.xml');
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    await gw.waitFor(callId, 'ringing');
    const res = await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    expect(res.status).toBe(200);
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({ status: 'cancelled', endCallReason: 'user_hungup', duration: 0 });
    expect(rec.participants.find((p: any) => p.type === 'trunk').status).toBe('cancelled');
  });

  it('hangup via the API after the answer: BYE → answered / user_hungup', async () => {
    const sipp = await farEnd('uas-200-wait-bye-from-us.xml', {}, true);
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    await gw.waitFor(callId, 'in_call');
    await new Promise((r) => setTimeout(r, 300));
    expect((await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`)).status).toBe(200);
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect(rec.participants.find((p: any) => p.type === 'trunk').status).toBe('left');
  });

  it('ring timeout: our CANCEL after ringTimeoutSeconds → missed / no_pickup_after_ringing_max_seconds', async () => {
    const sipp = await farEnd('uas-180-cancel-487.xml');
    const started = Date.now();
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(rec).toMatchObject({
      status: 'missed',
      endCallReason: 'no_pickup_after_ringing_max_seconds',
    });
    expect(rec.participants.find((p: any) => p.type === 'trunk').status).toBe('no_answer');
  });

  it('maximum duration: BYE after maxDurationSeconds → answered / call_maximum_time_reached', async () => {
    const sipp = await farEnd('uas-200-wait-bye-from-us.xml', {}, true);
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const rec = await gw.waitFor(callId, undefined, 15_000);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({
      status: 'answered',
      endCallReason: 'call_maximum_time_reached',
      duration: 4,
    });
  });

  it('407 then 200 with the trunk credentials', async () => {
    const sipp = await farEnd('uas-407-then-200.xml');
    const trunkId = await gw.trunk(sipp.port, { username: 'alice', password: 'secret' });
    const callId = await gw.call(trunkId, number());
    await gw.waitFor(callId, 'in_call');
    await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
  });

  it('alternate numbers are tried in order after a failed attempt, each visible on the record', async () => {
    const sipp = await farEnd(
      finalResponseScenario(486, 'Busy Here', ['Reason: Q.850;cause=17']),
      {},
      false,
      20,
      2,
    );
    const callId = await gw.call(await gw.trunk(sipp.port), number(), {
      additionalPhoneNumbers: '+1 (212) 555-9901',
    });
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0);
    expect(rec.attempts).toEqual([
      expect.objectContaining({
        number: rec.phoneNumber,
        status: 'busy',
        endCallReason: 'caller_busy',
      }),
      expect.objectContaining({
        number: '+12125559901',
        status: 'busy',
        endCallReason: 'caller_busy',
      }),
    ]);
    expect(
      rec.participants
        .filter((p: any) => p.type === 'trunk')
        .map((p: any) => [p.phoneNumber, p.status]),
    ).toEqual([
      [rec.phoneNumber, 'rejected'],
      ['+12125559901', 'rejected'],
    ]);
    expect(rec).toMatchObject({
      status: 'busy',
      endCallReason: 'caller_busy',
      sipFailure: { code: 486, q850: 17 },
    });
  });
});
