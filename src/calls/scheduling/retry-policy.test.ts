// Retries after busy / no answer / voicemail / failed, dropped calls, and
// callee-requested callbacks (spec §2.1 maxRetries, retryDelayMinutes).
import { describe, expect, it } from 'vitest';
import type { CallError } from '../call-error.js';
import { addCall, makeKit, type Kit } from '../protections/protections-test-kit.js';
import type { CallRecord } from '../../model/call-record.js';
import { RetryPolicy } from './retry-policy.js';
import { Scheduler, type DialAttempt } from './scheduler.js';

const MIN = 60_000;

function policy(kit: Kit, retryDelayUnitMs?: number): RetryPolicy {
  return new RetryPolicy(
    {
      schedules: kit.schedules,
      calls: kit.calls,
      companies: kit.store.companies,
      clock: kit.clock,
    },
    { retryDelayUnitMs },
  );
}

/** A record being dialed (stored as `ringing`); the attempt's outcome is `outcome`. */
function ended(
  kit: Kit,
  outcome: Partial<CallRecord>,
  stored: Partial<CallRecord> = {},
): CallRecord {
  const r = addCall(kit, {
    status: 'ringing',
    retries: 0,
    maxRetries: 3,
    retryDelayMinutes: 30,
    ...stored,
  });
  return { ...r, ...outcome };
}

describe('RetryPolicy.onCallFinished', () => {
  it('busy: retry retryDelayMinutes later, record scheduled, then dialed by the scheduler', async () => {
    const kit = makeKit();
    const r = ended(kit, { status: 'busy' });
    const s = policy(kit).onCallFinished(r)!;
    expect(s).toMatchObject({
      kind: 'retry',
      attempt: 2,
      dueAt: '2026-03-10T15:30:00.000Z',
      idempotencyKey: `${r.id}:2`,
    });
    expect(kit.calls.getById(r.id)).toMatchObject({
      status: 'scheduled',
      scheduledAt: '2026-03-10T15:30:00.000Z',
      scheduledReason: 'retry',
      rescheduled: true,
      rescheduledAt: '2026-03-10T15:00:00.000Z',
      retries: 1,
      lastAttemptStatus: 'busy',
    });
    const dialed: DialAttempt[] = [];
    const sch = new Scheduler(
      {
        schedules: kit.schedules,
        calls: kit.calls,
        companies: kit.store.companies,
        history: kit.history,
        optOuts: kit.store.optOuts,
        clock: kit.clock,
        zones: () => Promise.resolve({ country: 'US', zones: ['America/New_York'] }),
        dial: (_id, a) => {
          dialed.push(a);
          return Promise.resolve();
        },
      },
      { owner: 'a' },
    );
    kit.clock.advance(29 * MIN);
    expect(await sch.tick()).toBe(0);
    kit.clock.advance(MIN);
    expect(await sch.tick()).toBe(1);
    expect(dialed).toEqual([expect.objectContaining({ kind: 'retry', attempt: 2 })]);
  });

  for (const status of ['missed', 'voice_mail', 'failed']) {
    it(`${status} is retried`, () => {
      const kit = makeKit();
      expect(policy(kit).onCallFinished(ended(kit, { status }))?.kind).toBe('retry');
    });
  }

  it('a dropped call (failed_during_call) is retried as dropped_call', () => {
    const kit = makeKit();
    const r = ended(kit, { status: 'failed_during_call' });
    expect(policy(kit).onCallFinished(r)?.kind).toBe('dropped_call');
    expect(kit.calls.getById(r.id)!.scheduledReason).toBe('dropped_call');
  });

  it('retryDelayUnitMs (test/config knob) shortens the delay to seconds', () => {
    const kit = makeKit();
    const s = policy(kit, 1000).onCallFinished(ended(kit, { status: 'busy' }));
    expect(s?.dueAt).toBe('2026-03-10T15:00:30.000Z');
  });

  it('maxRetries 0 and 1 mean one attempt; 3 means three in all', () => {
    const kit = makeKit();
    expect(
      policy(kit).onCallFinished(ended(kit, { status: 'busy' }, { maxRetries: 0 })),
    ).toBeNull();
    expect(
      policy(kit).onCallFinished(ended(kit, { status: 'busy' }, { maxRetries: 1 })),
    ).toBeNull();
    expect(
      policy(kit).onCallFinished(ended(kit, { status: 'busy' }, { retries: 1 }))?.attempt,
    ).toBe(2 + 1);
    expect(policy(kit).onCallFinished(ended(kit, { status: 'busy' }, { retries: 2 }))).toBeNull();
  });

  it('answered, opted-out and permanently failed calls are not retried', () => {
    const kit = makeKit();
    expect(policy(kit).onCallFinished(ended(kit, { status: 'answered' }))).toBeNull();
    const never = { status: 'busy', outboundResult: { askedToNeverCallAgain: true } };
    expect(policy(kit).onCallFinished(ended(kit, never))).toBeNull();
    const gone = { status: 'failed', sipFailure: { code: 404, kind: 'number_not_in_service' } };
    expect(policy(kit).onCallFinished(ended(kit, gone))).toBeNull();
  });

  it('a callback the callee asked for is scheduled even with the retries used up', () => {
    const kit = makeKit();
    const r = ended(
      kit,
      {
        status: 'answered',
        outboundResult: { askedToCallBackLater: true, dateTimeToCallBack: '2026-03-11T14:00:00Z' },
      },
      { maxRetries: 1, retries: 0 },
    );
    expect(policy(kit).onCallFinished(r)).toMatchObject({
      kind: 'customer_callback',
      dueAt: '2026-03-11T14:00:00.000Z',
    });
    expect(kit.calls.getById(r.id)).toMatchObject({
      scheduledReason: 'customer_callback',
      retries: 0,
    });
  });

  it('moves a retry that falls outside the window when the record keeps its zones', () => {
    const kit = makeKit({ now: '2026-03-11T00:45:00Z' }); // 20:45 EDT
    const r = ended(
      kit,
      { status: 'missed' },
      { destinationTimeZones: ['America/New_York'], destinationCountry: 'US' },
    );
    expect(policy(kit).onCallFinished(r)?.dueAt).toBe('2026-03-11T13:00:00.000Z');
  });

  it('call_already_scheduled when a dial is already waiting; failed_to_schedule_call when final', () => {
    const kit = makeKit();
    const r = ended(kit, { status: 'busy' });
    policy(kit).onCallFinished(r);
    expect(() => policy(kit).onCallFinished(r)).toThrow(
      expect.objectContaining({ code: 'call_already_scheduled' }) as CallError,
    );
    const done = ended(kit, { status: 'busy' }, { status: 'busy' });
    expect(() => policy(kit).onCallFinished(done)).toThrow(
      expect.objectContaining({ code: 'failed_to_schedule_call' }) as CallError,
    );
  });
});
