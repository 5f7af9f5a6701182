// The dial gate (docs/decisions/dial-path.md): what it decides for a number
// about to be dialed, with the time it may be dialed when it refuses.
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../model/call-record.js';
import type { DestinationZones } from './destination-zones.js';
import { checkDial, type DialPurpose } from './dial-gate.js';
import { addAnswered, addCall, addFailed, makeKit, type Kit } from './protections-test-kit.js';

const NUMBER = '+12125551234';
const NY: DestinationZones = { country: 'US', zones: ['America/New_York'] };
const TOKYO: DestinationZones = { country: 'JP', zones: ['Asia/Tokyo'] };

function gate(
  kit: Kit,
  r: CallRecord,
  dest = NY,
  purpose: DialPurpose = 'dial',
  number = r.phoneNumber,
) {
  return checkDial({ record: r, number, destination: dest, settings: {}, purpose }, kit.deps);
}

describe('dial gate', () => {
  it('the call being dialed does not block itself; allowed inside the window', () => {
    const kit = makeKit(); // 2026-03-10 15:00Z, 11:00 in New York, a Tuesday
    const r = addCall(kit, { status: 'scheduled', useAntiHarassmentProtection: true });
    expect(gate(kit, r)).toEqual({ kind: 'dial', zones: ['America/New_York'] });
  });

  it('another scheduled call does not block; a live one skips the number until it should be over', () => {
    const kit = makeKit();
    const r = addCall(kit, { status: 'scheduled' });
    addCall(kit, { status: 'scheduled', agentId: 'other' });
    expect(gate(kit, r).kind).toBe('dial');
    addCall(kit, { status: 'in_call', agentId: 'other' });
    expect(gate(kit, r)).toMatchObject({
      kind: 'skip',
      reason: 'call_already_in_progress',
      nextAllowedAt: Date.parse('2026-03-10T15:05:00.000Z'),
    });
  });

  it('an alternate is judged in its own zone: Tokyo at 00:00 is outside, until 09:00 Tokyo', () => {
    const kit = makeKit(); // 15:00Z = 00:00 in Tokyo
    const r = addCall(kit, { status: 'trying', additionalPhoneNumbers: ['+81312345678'] });
    expect(gate(kit, r, TOKYO, 'dial', '+81312345678')).toMatchObject({
      kind: 'skip',
      reason: 'outside_calling_hours',
      nextAllowedAt: Date.parse('2026-03-11T00:00:00.000Z'),
    });
    // the request's override applies to every number
    expect(
      gate(kit, { ...r, overrideTimeRestriction: true }, TOKYO, 'dial', '+81312345678').kind,
    ).toBe('dial');
  });

  it('outside the window now: skipped to the next window', () => {
    const kit = makeKit({ now: '2026-03-11T02:00:00Z' });
    const r = addCall(kit, { status: 'scheduled' });
    expect(gate(kit, r)).toMatchObject({
      kind: 'skip',
      reason: 'outside_calling_hours',
      nextAllowedAt: Date.parse('2026-03-11T13:00:00.000Z'),
    });
  });

  it('cooldown skips to its end; a permanent opt-out skips for good', () => {
    const kit = makeKit();
    const r = addCall(kit, { status: 'scheduled' });
    addAnswered(kit, NUMBER, '2026-03-10T14:30:00.000Z', 2);
    expect(gate(kit, r)).toMatchObject({
      kind: 'skip',
      reason: 'cooldown_period_active',
      nextAllowedAt: Date.parse('2026-03-10T15:32:00.000Z'),
    });
    kit.store.optOuts.save({
      companyId: kit.companyId,
      phoneNumber: NUMBER,
      permanent: true,
      blockedUntil: null,
      reason: null,
      source: 'test',
      createdAt: '2026-03-01T00:00:00.000Z',
    });
    expect(gate(kit, r)).toMatchObject({
      kind: 'skip',
      reason: 'callee_opted_out',
      nextAllowedAt: undefined,
    });
    expect(gate(kit, r, NY, 'customer_callback')).toMatchObject({ reason: 'callee_opted_out' });
  });

  it('a callback the callee asked for passes the cooldown and the daily limit, not the failed limit', () => {
    const kit = makeKit();
    const r = addCall(kit, { status: 'scheduled' });
    for (const h of ['10', '11', '12']) addAnswered(kit, NUMBER, `2026-03-10T${h}:00:00.000Z`, 2);
    addAnswered(kit, NUMBER, '2026-03-10T14:50:00.000Z', 2);
    expect(gate(kit, r)).toMatchObject({ kind: 'skip', reason: 'daily_call_limit_reached' });
    expect(gate(kit, r, NY, 'customer_callback').kind).toBe('dial');
    for (const m of ['00', '10', '20']) addFailed(kit, NUMBER, `2026-03-10T14:${m}:00.000Z`);
    expect(gate(kit, r, NY, 'customer_callback')).toMatchObject({
      kind: 'skip',
      reason: 'failed_call_limit_reached',
      nextAllowedAt: Date.parse('2026-03-11T00:00:00.000Z'), // next UTC day: 20:00 EDT, inside the window
    });
  });

  it('anti-harassment off for the call: its counters do not hold it, the opt-out still does', () => {
    const kit = makeKit();
    const r = addCall(kit, { status: 'scheduled', useAntiHarassmentProtection: false });
    for (const m of ['00', '10', '20']) addFailed(kit, NUMBER, `2026-03-10T14:${m}:00.000Z`);
    expect(gate(kit, r).kind).toBe('dial');
  });
});
