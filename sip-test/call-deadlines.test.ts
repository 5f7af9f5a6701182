// Issue 21 (docs/decisions/dial-path.md, "Deadlines belong to the call",
// "No answer at all"): the ring timeout is armed when the attempt's INVITE
// leaves, the maximum duration when it is answered (the agent's own, else the
// gateway default), and the watchdog only steps in past the call's own
// limits plus stuckAfterSeconds, never measured from the record's creation.
// When nobody answers at all (nothing, or only 100 Trying) the call fails to
// connect; a CANCEL goes only once a provisional response came (RFC 3261
// §9.1: 100 Trying is one, silence is not); after a 180 our CANCEL makes it
// a missed call.
//
// One daemon with short limits: ring timeout 5 s, maximum duration 10 s,
// stuck after 5 s more, a watchdog looking every 500 ms. A watchdog that
// measured from the record's creation would end every call below after
// 5 + 10 + 5 = 20 s as call_stuck.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { SipResponder } from './support/sip-responder.js';

let gw: Gateway;
const farEnds = new FarEnds();
const responders: SipResponder[] = [];
let n = 0;
// New York numbers of this file (+1 212 555 02xx), one per test.
const number = () => `+1212555${String(210 + n++).padStart(4, '0')}`;

const RING_TIMEOUT_S = 5;
const MAX_DURATION_S = 10;

beforeAll(async () => {
  gw = await startGateway({
    GATEWAY_RING_TIMEOUT_SECONDS: String(RING_TIMEOUT_S),
    GATEWAY_MAX_DURATION_SECONDS: String(MAX_DURATION_S),
    GATEWAY_STUCK_AFTER_SECONDS: '5',
    GATEWAY_WATCHDOG_INTERVAL_MS: '500',
    GATEWAY_SCHEDULER_POLL_MS: '200',
    // One minute of retryDelayMinutes is 400 ms: the minimum 30 minutes → 12 s.
    GATEWAY_RETRY_DELAY_UNIT_MS: '400',
    // Six calls polled side by side every 100 ms exceed the default 600 requests a minute.
    GATEWAY_RATE_LIMIT_MAX: '100000',
  });
}, 30_000);
afterAll(async () => {
  farEnds.killAll();
  for (const r of responders) r.close();
  await gw?.stop();
});

async function responder(...args: Parameters<typeof SipResponder.start>): Promise<SipResponder> {
  const r = await SipResponder.start(...args);
  responders.push(r);
  return r;
}

const count = (messages: string, method: string) =>
  (messages.match(new RegExp(`^${method} sip:`, 'gm')) ?? []).length;

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

// The calls below mostly wait (held calls, ring timers): they run side by side.
describe.concurrent('the call owns its deadlines', () => {
  it('a scheduled call lives to its maximum duration: answered / call_maximum_time_reached after 10 s, not call_stuck', async ({
    expect,
  }) => {
    const sipp = await farEnds.start('uas-200-wait-bye-from-us.xml', {
      rtpEcho: true,
      timeoutSec: 50,
    });
    const trunk = await gw.trunk(sipp.port);
    const due = new Date(Date.now() + 15_000).toISOString();
    const res = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
      destinationNumber: number(),
      agentId: gw.agentId,
      sipTrunkId: trunk,
      useAntiHarassmentProtection: false,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
      maxRetries: 0,
      scheduledAt: due,
    });
    expect(res.json).toMatchObject({ scheduled: true, scheduleTime: due });
    const rec = await gw.waitFor(res.json.callId, undefined, 45_000);

    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'call_maximum_time_reached' });
    expect(rec.duration).toBeGreaterThanOrEqual(MAX_DURATION_S);
    expect(rec.duration).toBeLessThanOrEqual(MAX_DURATION_S + 1);
    expect(Date.parse(rec.startAt)).toBeGreaterThanOrEqual(Date.parse(due));
    expect(rec.attempts).toHaveLength(1);
    expect(rec.attempts[0]).toMatchObject({
      status: 'answered',
      endCallReason: 'call_maximum_time_reached',
      answeredAt: rec.startAt,
    });
    // The far end got our BYE.
    expect((await sipp.done).code).toBe(0);
  }, 60_000);

  it("the agent's own maximum duration (30 s) outlives the gateway default: the far end's BYE after 22 s ends it as caller_hungup", async ({
    expect,
  }) => {
    const created = await gw.api('POST', '/api/v1/agents', {
      name: 'long-calls',
      websocketUrl: gw.agentServer.url,
      outgoing: { maxDurationSeconds: 30 },
    });
    expect(created.status).toBe(201);
    const sipp = await farEnds.start('uas-180-200-hold-bye-from-far-end.xml', {
      keys: { '-d': '22000' },
      rtpEcho: true,
      timeoutSec: 50,
    });
    const callId = await gw.call(await gw.trunk(sipp.port), number(), {
      agentId: created.json.id,
    });
    const rec = await gw.waitFor(callId, undefined, 45_000);

    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    expect(rec.duration).toBeGreaterThanOrEqual(21);
    expect(rec.duration).toBeLessThanOrEqual(23);
    expect((await sipp.done).code).toBe(0);
  }, 60_000);

  it('a retry answered 12 s after the first attempt lives to its maximum duration: call_maximum_time_reached, not call_stuck', async ({
    expect,
  }) => {
    // First INVITE busy, the retry answered and held until our BYE.
    const far = await responder(({ index }) =>
      index === 0
        ? { kind: 'reject', code: 486, reason: 'Busy Here', headers: ['Reason: Q.850;cause=17'] }
        : { kind: 'answer' },
    );
    const to = number();
    const callId = await gw.call(await gw.trunk(far.port), to, {
      maxRetries: 2,
      retryDelayMinutes: 30,
    });
    const rec = await gw.waitFor(callId, undefined, 45_000);

    expect(rec).toMatchObject({
      status: 'answered',
      endCallReason: 'call_maximum_time_reached',
      retries: 1,
    });
    expect(rec.duration).toBeGreaterThanOrEqual(MAX_DURATION_S);
    expect(rec.duration).toBeLessThanOrEqual(MAX_DURATION_S + 1);
    expect(rec.attempts).toEqual([
      expect.objectContaining({ number: to, status: 'busy', endCallReason: 'caller_busy' }),
      expect.objectContaining({
        number: to,
        status: 'answered',
        endCallReason: 'call_maximum_time_reached',
        inviteSentAt: expect.any(String),
        answeredAt: rec.startAt,
      }),
    ]);
    expect(rec.attempts[1].round).toBeGreaterThan(rec.attempts[0].round);
    // The retry was dialed after the delay, and held for the full maximum duration.
    expect(seconds(rec.attempts[0].endedAt, rec.attempts[1].startedAt)).toBeGreaterThanOrEqual(
      11.5,
    );
    expect(far.received('INVITE', to)).toHaveLength(2);
    expect(far.received('BYE', to)).toHaveLength(1);
  }, 60_000);

  // Silence: no CANCEL may be sent (§9.1 holds it until a provisional
  // response). 100 Trying is one: the CANCEL goes, and the far end would
  // answer it (200, then 487), as any live UAS does.
  it.for([
    ['never answers', 'silent', 0],
    ['only sends 100 Trying', 'trying-only', 1],
  ] as const)(
    'a far end that %s: failed / failed_to_connect when the ring timer fires, CANCELs as RFC 3261 §9.1 allows',
    { timeout: 60_000 },
    async ([, kind, cancels], { expect }) => {
      const far = await responder({ kind });
      const callId = await gw.call(await gw.trunk(far.port), number());
      const rec = await gw.waitFor(callId, undefined, 40_000);

      expect
        .soft({
          status: rec.status,
          endCallReason: rec.endCallReason,
          endedAfterSeconds: seconds(rec.createdAt, rec.endAt),
        })
        .toEqual({
          status: 'failed',
          endCallReason: 'failed_to_connect',
          endedAfterSeconds: expect.toSatisfy(
            (s: number) => s >= RING_TIMEOUT_S - 0.1 && s <= RING_TIMEOUT_S + 3,
            'within 3 s of the ring timeout',
          ),
        });
      // Absence needs a moment: nothing may follow the final status either.
      await new Promise((r) => setTimeout(r, 1000));
      expect(far.received('INVITE')).toHaveLength(1);
      expect(far.received('CANCEL'), 'CANCELs the far end received').toHaveLength(cancels);
    },
  );

  it('a far end that rings (180) and never answers: our CANCEL when the ring timer fires → missed / no_pickup_after_ringing_max_seconds', async ({
    expect,
  }) => {
    const sipp = await farEnds.start('uas-180-cancel-487.xml', { timeoutSec: 30 });
    const callId = await gw.call(await gw.trunk(sipp.port), number());
    const rec = await gw.waitFor(callId, undefined, 20_000);

    expect(rec).toMatchObject({
      status: 'missed',
      endCallReason: 'no_pickup_after_ringing_max_seconds',
    });
    const after = seconds(rec.createdAt, rec.endAt);
    expect(after).toBeGreaterThanOrEqual(RING_TIMEOUT_S - 0.1);
    expect(after).toBeLessThanOrEqual(RING_TIMEOUT_S + 3);
    const result = await sipp.done;
    expect(result.code).toBe(0);
    expect(count(result.messages, 'CANCEL')).toBe(1);
  }, 60_000);
});
