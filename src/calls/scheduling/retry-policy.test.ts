// Retries after busy / no answer / voicemail / failed, dropped calls, and
// callee-requested callbacks (spec §2.1 maxRetries, retryDelayMinutes): the
// policy's decision only (the call session writes it).
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../clock.js';
import type { CallRecord } from '../../model/call-record.js';
import { RetryPolicy, type RoundOutcome } from './retry-policy.js';

const MIN = 60_000;
const NOW = Date.parse('2026-03-10T15:00:00Z');
const NUMBER = '+12125551234';

type Fields = Pick<CallRecord, 'retries' | 'maxRetries' | 'retryDelayMinutes' | 'phoneNumber'> &
  Partial<Pick<CallRecord, 'outboundResult'>>;

function record(fields: Partial<Fields> = {}): Fields {
  return { retries: 0, maxRetries: 3, retryDelayMinutes: 30, phoneNumber: NUMBER, ...fields };
}

function decide(fields: Partial<Fields>, outcome: Partial<RoundOutcome>, unitMs?: number) {
  const policy = new RetryPolicy(new ManualClock(NOW), { retryDelayUnitMs: unitMs });
  return policy.decide(record(fields), {
    status: 'busy',
    endCallReason: 'caller_busy',
    ...outcome,
  });
}

describe('RetryPolicy.decide', () => {
  it('busy, missed, voicemail and failed: a retry retryDelayMinutes later that uses one retry', () => {
    for (const status of ['busy', 'missed', 'voice_mail', 'failed'] as const) {
      expect(decide({}, { status, endCallReason: 'x' })).toEqual({
        kind: 'retry',
        dueAt: NOW + 30 * MIN,
        countsAsRetry: true,
      });
    }
    expect(decide({ retryDelayMinutes: 90 }, {})?.dueAt).toBe(NOW + 90 * MIN);
  });

  it('a dropped call (failed_during_call) is retried as dropped_call', () => {
    expect(decide({}, { status: 'failed_during_call' })?.kind).toBe('dropped_call');
  });

  it('retryDelayUnitMs (test/config knob) shortens the delay to seconds', () => {
    expect(decide({}, {}, 100)?.dueAt).toBe(NOW + 30 * 100);
  });

  it('maxRetries 0 and 1 mean one round; 3 means three in all', () => {
    expect(decide({ maxRetries: 0 }, {})).toBeNull();
    expect(decide({ maxRetries: 1 }, {})).toBeNull();
    expect(decide({ maxRetries: 3, retries: 1 }, {})).not.toBeNull();
    expect(decide({ maxRetries: 3, retries: 2 }, {})).toBeNull();
  });

  it('answered, opted-out and permanently failed calls are not retried', () => {
    expect(decide({}, { status: 'answered', endCallReason: 'caller_hungup' })).toBeNull();
    expect(decide({}, { status: 'cancelled', endCallReason: 'user_hungup' })).toBeNull();
    expect(decide({ outboundResult: { askedToNeverCallAgain: true } }, {})).toBeNull();
    expect(
      decide(
        {},
        {
          status: 'failed',
          endCallReason: 'x',
          sipFailure: { code: 404, kind: 'number_not_in_service' },
        },
      ),
    ).toBeNull();
    expect(decide({}, { status: 'failed', endCallReason: 'wrong_set_number' })).toBeNull();
  });

  it('a callback the callee asked for: at its time, for the number reached, even with the retries used up', () => {
    const at = '2026-03-10T15:02:00.000Z';
    const next = decide(
      {
        retries: 2,
        maxRetries: 3,
        outboundResult: { askedToCallBackLater: true, dateTimeToCallBack: at },
      },
      { status: 'answered', endCallReason: 'caller_hungup', reachedNumber: '+12125550000' },
    );
    expect(next).toEqual({
      kind: 'customer_callback',
      dueAt: Date.parse(at),
      countsAsRetry: false,
      numbers: ['+12125550000'],
    });
    // a time already past is now
    const past = decide(
      {
        outboundResult: { askedToCallBackLater: true, dateTimeToCallBack: '2026-03-10T14:00:00Z' },
      },
      { status: 'answered', endCallReason: 'caller_hungup' },
    );
    expect(past).toMatchObject({ dueAt: NOW, numbers: [NUMBER] });
  });

  it('a transferred call is not called back, even when the agent noted a callback before the transfer', () => {
    expect(
      decide(
        {
          outboundResult: {
            askedToCallBackLater: true,
            dateTimeToCallBack: '2026-03-10T15:02:00Z',
          },
        },
        { status: 'transferred', endCallReason: 'call_transferred' },
      ),
    ).toBeNull();
  });
});
