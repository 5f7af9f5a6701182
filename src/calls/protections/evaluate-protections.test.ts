// The refusals of spec §2.4/§7 and the check order, against a :memory:
// store. "Now" is Tue 2026-03-10 15:00 UTC = 11:00 in New York (inside the
// window), so only the rule under test decides.
import { describe, expect, it } from 'vitest';
import { CallError } from '../call-error.js';
import type { DestinationZones } from './destination-zones.js';
import {
  evaluateProtections,
  PROTECTION_CHECK_ORDER,
  type ProtectionInput,
  applyTimeAndDayRules,
  computeTimeAndDayRules,
} from './evaluate-protections.js';
import { addAnswered, addCall, addFailed, makeKit, type Kit } from './protections-test-kit.js';

const NUMBER = '+12125551234';
const OTHER = '+12125559999';
const NY: DestinationZones = { country: 'US', zones: ['America/New_York'] };

function input(kit: Kit, over: Partial<ProtectionInput> = {}): ProtectionInput {
  return {
    companyId: kit.companyId,
    settings: kit.store.companies.get(kit.companyId)!.settings,
    phoneNumber: NUMBER,
    agentId: 'agent-1',
    overrideTimeRestriction: false,
    overrideDayRestriction: false,
    antiHarassment: true,
    destination: NY,
    ...over,
  };
}

function refusal(kit: Kit, over: Partial<ProtectionInput> = {}): CallError {
  try {
    evaluateProtections(input(kit, over), kit.deps);
  } catch (e) {
    if (e instanceof CallError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('evaluateProtections', () => {
  it('allows a call inside the window and keeps the zones', () => {
    const kit = makeKit();
    expect(evaluateProtections(input(kit), kit.deps)).toEqual({
      kind: 'allow',
      at: '2026-03-10T15:00:00.000Z',
      zones: ['America/New_York'],
      zoneSource: 'number',
      country: 'US',
    });
  });

  it('lists the check order', () => {
    expect(PROTECTION_CHECK_ORDER).toEqual([
      'callee_opted_out',
      'call_already_in_progress',
      'duplicate_within_60s',
      'daily_call_limit_reached',
      'weekly_call_limit_reached',
      'failed_call_limit_reached',
      'cooldown_period_active',
      'time_and_day_rules',
    ]);
  });

  describe('opt-outs (403 callee_opted_out)', () => {
    it('permanent: never retryable, no retry time', () => {
      const kit = makeKit();
      kit.store.optOuts.save(optOut(kit, { permanent: true }));
      const e = refusal(kit);
      expect(e.code).toBe('callee_opted_out');
      expect(e.details).toEqual({ retryable: false, permanent: true });
      expect(e.message).toMatch(/Do not resubmit/);
    });

    it('temporary: retryable at blockedUntil', () => {
      const kit = makeKit();
      kit.store.optOuts.save(optOut(kit, { blockedUntil: '2026-03-12T00:00:00.000Z' }));
      const e = refusal(kit);
      expect(e.details).toEqual({
        retryable: true,
        permanent: false,
        blockedUntil: '2026-03-12T00:00:00.000Z',
        nextAllowedAt: '2026-03-12T00:00:00.000Z',
        retryAfterSeconds: 33 * 3600,
      });
      expect(e.message).toContain('allowed at 2026-03-12T00:00:00.000Z');
    });

    it('an expired temporary opt-out no longer blocks', () => {
      const kit = makeKit();
      kit.store.optOuts.save(optOut(kit, { blockedUntil: '2026-03-10T14:00:00.000Z' }));
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
    });

    it('is checked before a call in progress', () => {
      const kit = makeKit();
      addCall(kit, { status: 'ringing' });
      kit.store.optOuts.save(optOut(kit, { permanent: true }));
      expect(refusal(kit).code).toBe('callee_opted_out');
    });
  });

  describe('one call per number (409 call_already_in_progress)', () => {
    it('a ringing call blocks; retryable after an estimate', () => {
      const kit = makeKit();
      const live = addCall(kit, { status: 'ringing', at: '2026-03-10T14:58:00.000Z' });
      const e = refusal(kit);
      expect(e.code).toBe('call_already_in_progress');
      expect(e.details).toEqual({
        retryable: true,
        retryAfterSeconds: 60,
        nextAllowedAt: '2026-03-10T15:01:00.000Z',
        alreadyScheduled: false,
        liveCallId: live.callId,
        liveCallMongoId: live.id,
        liveCallStatus: 'ringing',
      });
    });

    for (const status of ['trying', 'session_progress', 'in_call', 'to_be_processed']) {
      it(`${status} blocks`, () => {
        const kit = makeKit();
        addCall(kit, { status, at: '2026-03-10T14:00:00.000Z' });
        expect(refusal(kit).details).toMatchObject({ liveCallStatus: status, retryable: true });
      });
    }

    it('a scheduled call covers the request: not retryable, alreadyScheduled', () => {
      const kit = makeKit();
      const s = addCall(kit, {
        status: 'scheduled',
        scheduledAt: '2026-03-11T13:00:00.000Z',
        at: '2026-03-09T10:00:00.000Z',
      });
      const e = refusal(kit);
      expect(e.details).toEqual({
        retryable: false,
        alreadyScheduled: true,
        liveCallId: s.callId,
        liveCallMongoId: s.id,
        liveCallStatus: 'scheduled',
        scheduledAt: '2026-03-11T13:00:00.000Z',
      });
    });

    it('a number dialed as an alternate blocks while that attempt is under way', () => {
      const kit = makeKit();
      addCall(kit, {
        phoneNumber: OTHER,
        additionalPhoneNumbers: [NUMBER],
        status: 'ringing',
        attempts: [
          {
            number: OTHER,
            round: 1,
            startedAt: '2026-03-10T14:58:00Z',
            inviteSentAt: '2026-03-10T14:58:00Z',
            endedAt: '2026-03-10T14:59:00Z',
          },
          {
            number: NUMBER,
            round: 1,
            startedAt: '2026-03-10T14:59:10Z',
            inviteSentAt: '2026-03-10T14:59:10Z',
          },
        ],
        at: '2026-03-10T14:58:00.000Z',
      });
      expect(refusal(kit).code).toBe('call_already_in_progress');
    });

    it('a scheduled call that lists the number as an alternate does not block it', () => {
      const kit = makeKit();
      addCall(kit, { phoneNumber: OTHER, additionalPhoneNumbers: [NUMBER], status: 'scheduled' });
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
    });

    it('finished calls do not block', () => {
      const kit = makeKit();
      addCall(kit, { status: 'cancelled', at: '2026-03-10T14:00:00.000Z' });
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
    });
  });

  describe('same number + agent within 60 s (rule 5)', () => {
    it('is refused until 60 s after the first request', () => {
      const kit = makeKit();
      const first = addCall(kit, { status: 'failed', at: '2026-03-10T14:59:20.000Z' });
      const e = refusal(kit);
      expect(e.code).toBe('call_already_in_progress');
      expect(e.details).toMatchObject({
        retryable: true,
        retryAfterSeconds: 20,
        nextAllowedAt: '2026-03-10T15:00:20.000Z',
        liveCallMongoId: first.id,
        alreadyScheduled: false,
      });
      kit.clock.advance(20_000);
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
    });

    it('another agent is not a duplicate', () => {
      const kit = makeKit();
      addCall(kit, { status: 'failed', at: '2026-03-10T14:59:20.000Z' });
      expect(evaluateProtections(input(kit, { agentId: 'agent-2' }), kit.deps).kind).toBe('allow');
    });
  });

  describe('anti-harassment (429)', () => {
    it('3 answered calls in the UTC day: daily limit until the next UTC midnight', () => {
      const kit = makeKit();
      for (const t of ['01:00', '05:00', '13:00'])
        addAnswered(kit, NUMBER, `2026-03-10T${t}:00.000Z`);
      const e = refusal(kit);
      expect(e.code).toBe('daily_call_limit_reached');
      expect(e.details).toEqual({
        retryable: true,
        nextAllowedAt: '2026-03-11T00:00:00.000Z',
        retryAfterSeconds: 9 * 3600,
      });
      expect(e.message).toContain('allowed at 2026-03-11T00:00:00.000Z');
    });

    it('answered calls of the previous UTC day do not count for the day', () => {
      const kit = makeKit();
      for (const t of ['20:00', '22:00', '23:30'])
        addAnswered(kit, NUMBER, `2026-03-09T${t}:00.000Z`);
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
    });

    it('5 answered calls in 7 days: weekly limit until the oldest leaves the window', () => {
      const kit = makeKit();
      for (const d of ['04', '05', '06', '08', '09'])
        addAnswered(kit, NUMBER, `2026-03-${d}T10:00:00.000Z`);
      const e = refusal(kit);
      expect(e.code).toBe('weekly_call_limit_reached');
      expect(e.details).toMatchObject({
        nextAllowedAt: '2026-03-11T10:00:00.000Z',
        retryAfterSeconds: 19 * 3600,
      });
    });

    it('3 failed attempts in the UTC day: failed limit; our own cancel does not count', () => {
      const kit = makeKit();
      addFailed(kit, NUMBER, '2026-03-10T09:00:00.000Z', 'busy');
      addFailed(kit, NUMBER, '2026-03-10T10:00:00.000Z', 'missed');
      addFailed(kit, NUMBER, '2026-03-10T11:00:00.000Z', 'cancelled');
      expect(evaluateProtections(input(kit), kit.deps).kind).toBe('allow');
      addFailed(kit, NUMBER, '2026-03-10T12:00:00.000Z', 'failed');
      kit.clock.advance(120_000);
      const e = refusal(kit);
      expect(e.code).toBe('failed_call_limit_reached');
      expect(e.details).toMatchObject({ nextAllowedAt: '2026-03-11T00:00:00.000Z' });
    });

    it('attempts[] of a record count one by one, by number', () => {
      const kit = makeKit();
      addCall(kit, {
        status: 'busy',
        agentId: 'agent-old',
        at: '2026-03-10T12:00:00.000Z',
        attempts: ['09', '10', '11'].map((h) => ({
          number: NUMBER,
          round: 1,
          startedAt: `2026-03-10T${h}:00:00.000Z`,
          inviteSentAt: `2026-03-10T${h}:00:00.000Z`,
          endedAt: `2026-03-10T${h}:00:30.000Z`,
          status: 'busy' as const,
        })),
      });
      expect(refusal(kit).code).toBe('failed_call_limit_reached');
      expect(evaluateProtections(input(kit, { phoneNumber: OTHER }), kit.deps).kind).toBe('allow');
    });

    it('1 hour after an answered call: cooldown from its end, and lastCallAt is that end (nextAllowedAt = lastCallAt + 1 h)', () => {
      const kit = makeKit();
      addAnswered(kit, NUMBER, '2026-03-10T14:30:00.000Z', 2);
      const e = refusal(kit);
      expect(e.code).toBe('cooldown_period_active');
      expect(e.details).toEqual({
        retryable: true,
        nextAllowedAt: '2026-03-10T15:32:00.000Z',
        retryAfterSeconds: 32 * 60,
        lastCallAt: '2026-03-10T14:32:00.000Z',
      });
    });

    it('several failing checks: the first names it, nextAllowedAt is the latest', () => {
      const kit = makeKit({ now: '2026-03-10T23:30:00Z' });
      addAnswered(kit, NUMBER, '2026-03-10T10:00:00.000Z');
      addAnswered(kit, NUMBER, '2026-03-10T12:00:00.000Z');
      addAnswered(kit, NUMBER, '2026-03-10T23:00:00.000Z', 10);
      const e = refusal(kit, { destination: { country: 'US', zones: ['Pacific/Honolulu'] } });
      expect(e.code).toBe('daily_call_limit_reached');
      expect(e.details).toMatchObject({ nextAllowedAt: '2026-03-11T00:10:00.000Z' });
    });

    it('off, inbound calls and company test numbers do not count', () => {
      const kit = makeKit({ settings: { testNumbers: [OTHER] } });
      for (const t of ['01', '05', '09']) addAnswered(kit, NUMBER, `2026-03-10T${t}:00:00.000Z`);
      expect(evaluateProtections(input(kit, { antiHarassment: false }), kit.deps).kind).toBe(
        'allow',
      );
      for (const t of ['01', '05', '09']) addAnswered(kit, OTHER, `2026-03-10T${t}:00:00.000Z`);
      expect(evaluateProtections(input(kit, { phoneNumber: OTHER }), kit.deps).kind).toBe('allow');
      const inbound = '+12125557777';
      for (const t of ['01', '05', '09']) {
        addCall(kit, {
          phoneNumber: inbound,
          callDirection: 'inbound',
          status: 'answered',
          startAt: `2026-03-10T${t}:00:00.000Z`,
          agentId: 'x',
        });
      }
      expect(evaluateProtections(input(kit, { phoneNumber: inbound }), kit.deps).kind).toBe(
        'allow',
      );
    });

    it('is judged at the requested scheduledAt: tomorrow is a new UTC day', () => {
      const kit = makeKit();
      for (const t of ['01', '05', '09']) addAnswered(kit, NUMBER, `2026-03-10T${t}:00:00.000Z`);
      const d = evaluateProtections(
        input(kit, { scheduledAt: '2026-03-11T14:00:00.000Z' }),
        kit.deps,
      );
      expect(d).toMatchObject({
        kind: 'schedule',
        reason: 'scheduled_at_requested',
        at: '2026-03-11T14:00:00.000Z',
      });
    });
  });

  describe('time and day rules schedule instead of refusing', () => {
    it('a requested Saturday moves to Monday 09:00', () => {
      const kit = makeKit();
      const d = evaluateProtections(
        input(kit, { scheduledAt: '2026-03-14T15:00:00.000Z' }),
        kit.deps,
      );
      expect(d).toMatchObject({
        kind: 'schedule',
        reason: 'blocked_day',
        blockedDay: 'weekend',
        at: '2026-03-16T13:00:00.000Z',
      });
    });

    it('a requested time more than 366 days ahead: failed_to_schedule_call', () => {
      const kit = makeKit();
      const e = refusal(kit, { scheduledAt: '2027-04-01T15:00:00.000Z' });
      expect(e.code).toBe('failed_to_schedule_call');
    });

    it('rules that block every day: failed_to_schedule_call', () => {
      const kit = makeKit({
        settings: { callingRules: { US: { weekendDays: [1, 2, 3, 4, 5, 6, 7] } } },
      });
      expect(refusal(kit).code).toBe('failed_to_schedule_call');
    });

    it('an unknown zone with rules in force: failed_to_schedule_call; with both overrides: allowed', () => {
      const kit = makeKit();
      const destination = { country: null, zones: [] };
      expect(refusal(kit, { destination }).code).toBe('failed_to_schedule_call');
      const d = evaluateProtections(
        input(kit, { destination, overrideDayRestriction: true, overrideTimeRestriction: true }),
        kit.deps,
      );
      expect(d.kind).toBe('allow');
    });
  });
});

function optOut(kit: Kit, o: { permanent?: boolean; blockedUntil?: string }) {
  return {
    companyId: kit.companyId,
    phoneNumber: NUMBER,
    permanent: o.permanent ?? false,
    blockedUntil: o.blockedUntil ?? null,
    reason: null,
    source: 'test',
    createdAt: '2026-03-01T00:00:00.000Z',
  };
}

describe('time and day rules, judged once per destination per minute', () => {
  const input = {
    settings: {},
    destination: { country: 'US', zones: ['America/New_York'] },
    overrideTimeRestriction: false,
    overrideDayRestriction: false,
  };
  const at = (iso: string) => Date.parse(iso);

  it('never carries an answer across the window edge (21:00 New York = 01:00Z in March)', () => {
    for (const t of ['2026-03-11T00:59:00.000Z', '2026-03-11T00:59:59.999Z']) {
      expect(applyTimeAndDayRules(input, at(t), at(t))).toMatchObject({ kind: 'allow', at: t });
    }
    expect(
      applyTimeAndDayRules(input, at('2026-03-11T01:00:00.000Z'), at('2026-03-11T01:00:00.000Z')),
    ).toMatchObject({
      kind: 'schedule',
      reason: 'outside_calling_hours',
      at: '2026-03-11T13:00:00.000Z',
    });
  });

  it('agrees with the computation afresh at every instant of a day with a DST change', () => {
    const start = at('2026-03-08T00:00:00.000Z'); // US spring forward at 07:00Z
    for (let t = start; t < start + 86_400_000; t += 7 * 60_000 + 13_457) {
      const memo = applyTimeAndDayRules(input, t, t);
      const fresh = computeTimeAndDayRules(input, t, t);
      expect(memo).toEqual(fresh);
    }
  });
});
