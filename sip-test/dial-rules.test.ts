// Issue 21 (docs/decisions/dial-path.md, "The gate"): every number a call
// dials passes the protections at dial time, the alternates
// (additionalPhoneNumbers) too. An alternate the gate refuses is written to
// the record's attempts as `skipped` with the refusal code and is never
// dialed: the far end (a SIP responder that counts INVITEs per dialed
// number) must never see an INVITE for it.
import { DateTime } from 'luxon';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { timezones } from 'libphonenumber-geo-carrier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { SipResponder } from './support/sip-responder.js';

let gw: Gateway;
let far: SipResponder;
let trunk: string;
let n = 0;
let agents = 0;
// New York numbers of this file (+1 212 555 01xx), one per use.
const number = () => `+1212555${String(110 + n++).padStart(4, '0')}`;

beforeAll(async () => {
  gw = await startGateway({ GATEWAY_RATE_LIMIT_MAX: '100000' });
  // Every INVITE is answered 486 Busy Here (Q.850 17): the primary is busy,
  // so the session goes on to the alternate.
  far = await SipResponder.start({
    kind: 'reject',
    code: 486,
    reason: 'Busy Here',
    headers: ['Reason: Q.850;cause=17'],
  });
  trunk = await gw.trunk(far.port);
}, 30_000);
afterAll(async () => {
  far?.close();
  await gw?.stop();
});

async function initiate(body: Record<string, unknown>): Promise<any> {
  const res = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
    agentId: gw.agentId,
    sipTrunkId: trunk,
    useAntiHarassmentProtection: false,
    overrideTimeRestriction: true,
    overrideDayRestriction: true,
    maxRetries: 0,
    ...body,
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json;
}

async function newAgent(): Promise<string> {
  const res = await gw.api('POST', '/api/v1/agents', {
    name: `agent-${agents++}`,
    websocketUrl: gw.agentServer.url,
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

/** The dialed attempt of the primary, as the contract writes it. */
const dialedBusy = (number: string) =>
  expect.objectContaining({
    number,
    round: expect.any(Number),
    startedAt: expect.any(String),
    inviteSentAt: expect.any(String),
    status: 'busy',
    endCallReason: 'caller_busy',
    endedAt: expect.any(String),
  });

/** A number the gate refused in the same round: written, never dialed. */
const skipped = (number: string, round: unknown, skipReason: string, until = false) =>
  expect.objectContaining({
    number,
    round,
    status: 'skipped',
    skipReason,
    at: expect.any(String),
    ...(until ? { nextAllowedAt: expect.any(String) } : {}),
  });

const nextUtcMidnight = (iso: string): string => {
  const d = new Date(iso);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
};

describe('alternates pass the gate at dial time', () => {
  it('an alternate on the opt-out list is skipped (callee_opted_out) and never rings when the primary is busy', async () => {
    const primary = number();
    const alternate = number();
    const opted = await gw.api('POST', '/api/v1/phones/opt-outs', {
      phoneNumber: alternate,
      reason: 'asked not to be called',
    });
    expect(opted.status).toBe(201);

    const { callId } = await initiate({
      destinationNumber: primary,
      additionalPhoneNumbers: alternate,
    });
    const rec = await gw.waitFor(callId, undefined, 15_000);

    // What the callee sees: their phone never rang.
    expect
      .soft(far.received('INVITE', alternate), 'INVITEs sent to the opted-out alternate')
      .toHaveLength(0);
    expect.soft(far.received('INVITE', primary)).toHaveLength(1);
    expect.soft(rec).toMatchObject({ status: 'busy', endCallReason: 'caller_busy' });
    expect(rec.attempts).toEqual([
      dialedBusy(primary),
      skipped(alternate, rec.attempts[0]?.round, 'callee_opted_out'),
    ]);
    expect(rec.attempts[1]).not.toHaveProperty('inviteSentAt');
  });

  it('an alternate with 3 failed attempts today is skipped (failed_call_limit_reached) and never rings', async () => {
    const alternate = number();
    // Three earlier calls to it, each busy; another agent each time (the
    // 60-second rule is per number and agent), protection off so none is refused.
    for (let i = 0; i < 3; i++) {
      const { callId } = await initiate({
        destinationNumber: alternate,
        agentId: await newAgent(),
      });
      expect((await gw.waitFor(callId, undefined, 15_000)).status).toBe('busy');
    }
    expect(far.received('INVITE', alternate)).toHaveLength(3);

    const primary = number();
    const { callId } = await initiate({
      destinationNumber: primary,
      additionalPhoneNumbers: [alternate],
      useAntiHarassmentProtection: true,
    });
    const rec = await gw.waitFor(callId, undefined, 15_000);

    expect.soft(far.received('INVITE', alternate), 'INVITEs sent to the alternate').toHaveLength(3);
    expect.soft(far.received('INVITE', primary)).toHaveLength(1);
    expect.soft(rec).toMatchObject({
      status: 'busy',
      endCallReason: 'caller_busy',
      useAntiHarassmentProtection: true,
    });
    expect(rec.attempts).toEqual([
      dialedBusy(primary),
      skipped(alternate, rec.attempts[0]?.round, 'failed_call_limit_reached', true),
    ]);
    expect(rec.attempts[1]).not.toHaveProperty('inviteSentAt');
    // The failed-attempts limit clears at the next UTC midnight.
    expect(rec.attempts[1].nextAllowedAt).toBe(nextUtcMidnight(rec.attempts[1].at));
  });

  it('an alternate outside its calling hours is skipped (outside_calling_hours) and never rings', async () => {
    const { inside, outside } = await pickWindowPair();
    const res = await gw.api('POST', '/api/v1/phones/calls/initiate-call', {
      destinationNumber: inside.number,
      additionalPhoneNumbers: outside.number,
      agentId: gw.agentId,
      sipTrunkId: trunk,
      useAntiHarassmentProtection: false,
      overrideDayRestriction: true, // no weekend or holiday dependence
      maxRetries: 0,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    // The primary is inside its window now: dialed at once, not scheduled.
    expect(res.json.scheduled, `${inside.zone} is inside its window`).toBe(false);
    const rec = await gw.waitFor(res.json.callId, undefined, 15_000);

    expect
      .soft(
        far.received('INVITE', outside.number),
        `INVITEs sent to the alternate, at ${outside.localTime} in ${outside.zone}`,
      )
      .toHaveLength(0);
    expect.soft(far.received('INVITE', inside.number)).toHaveLength(1);
    expect.soft(rec).toMatchObject({ status: 'busy', endCallReason: 'caller_busy' });
    expect(rec.attempts).toEqual([
      dialedBusy(inside.number),
      skipped(outside.number, rec.attempts[0]?.round, 'outside_calling_hours', true),
    ]);
    expect(rec.attempts[1]).not.toHaveProperty('inviteSentAt');
    // It may be dialed when its window opens at 09:00 local time.
    const opens = DateTime.fromISO(rec.attempts[1].nextAllowedAt, { zone: outside.zone });
    expect(opens.toFormat('HH:mm')).toBe('09:00');
    expect(opens.toMillis()).toBeGreaterThan(Date.parse(rec.attempts[1].at));
  });
});

interface Candidate {
  number: string;
  zone: string;
  localTime: string;
  inside: boolean;
  /** Minutes to the nearer window edge (09:00 or 21:00 local). */
  margin: number;
}

/**
 * One number whose zone is inside 09:00-21:00 now and one outside, both at
 * least 5 minutes from a window edge (such a pair exists at every instant of
 * the year for these five zones). Each candidate must map to a single zone.
 */
async function pickWindowPair(): Promise<{ inside: Candidate; outside: Candidate }> {
  const numbers = [
    '+81335550142', // Tokyo
    '+12125550199', // New York
    '+442079460142', // London
    '+61293744142', // Sydney
    '+18085550142', // Honolulu
  ];
  const now = Date.now();
  const candidates: Candidate[] = [];
  for (const e164 of numbers) {
    const parsed = parsePhoneNumberFromString(e164);
    expect(parsed?.isValid(), `${e164} is a valid number`).toBe(true);
    const zones = (await timezones(parsed!)) ?? [];
    expect(zones, `${e164} maps to one zone`).toHaveLength(1);
    const local = DateTime.fromMillis(now, { zone: zones[0]! });
    const minute = local.hour * 60 + local.minute;
    candidates.push({
      number: e164,
      zone: zones[0]!,
      localTime: local.toFormat('HH:mm'),
      inside: minute >= 9 * 60 && minute < 21 * 60,
      margin: Math.min(Math.abs(minute - 9 * 60), Math.abs(minute - 21 * 60)),
    });
  }
  const safe = candidates.filter((c) => c.margin >= 5);
  const inside = safe.find((c) => c.inside);
  const outside = safe.find((c) => !c.inside);
  if (!inside || !outside) throw new Error(`no window pair now: ${JSON.stringify(candidates)}`);
  return { inside, outside };
}
