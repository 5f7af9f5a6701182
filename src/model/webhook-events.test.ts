// Which events a call record's change reports.
import { describe, expect, it } from 'vitest';
import type { CallRecord } from './call-record.js';
import { callRecordFixture } from './test-support/call-record-fixture.js';
import { callEventsOf } from './webhook-events.js';

const base = callRecordFixture({
  id: 'r1',
  companyId: 'co',
  phoneNumber: '+12125551234',
  status: 'to_be_processed',
});
const next = (r: CallRecord, patch: Partial<CallRecord>): CallRecord => ({ ...r, ...patch });
const types = (before: CallRecord | undefined, after: CallRecord) =>
  callEventsOf(before, after).map((e) => e.type);

describe('callEventsOf', () => {
  it('creation: accepted, and scheduled with its time and reason when it waits', () => {
    expect(types(undefined, base)).toEqual(['call.accepted']);
    const scheduled = next(base, { status: 'scheduled', scheduledAt: '2026-06-10T16:00:00.000Z' });
    const events = callEventsOf(undefined, scheduled);
    expect(events.map((e) => e.type)).toEqual(['call.accepted', 'call.scheduled']);
    expect(events[1]!.data).toMatchObject({
      scheduleTime: '2026-06-10T16:00:00.000Z',
      reason: 'initial',
      call: { id: 'r1', status: 'scheduled' },
    });
  });

  it('a round: ringing, answered, ended; a retry is retry_scheduled; only status changes count', () => {
    const trying = next(base, { status: 'trying' });
    const ringing = next(trying, { status: 'ringing' });
    expect(types(base, trying)).toEqual([]);
    expect(types(trying, ringing)).toEqual(['call.ringing']);
    expect(types(ringing, ringing)).toEqual([]);
    const retry = next(ringing, { status: 'scheduled', scheduledReason: 'retry' });
    expect(types(ringing, retry)).toEqual(['call.retry_scheduled']);
    const inCall = next(ringing, { status: 'in_call' });
    expect(types(ringing, inCall)).toEqual(['call.answered']);
    const ended = next(inCall, { status: 'answered' });
    expect(types(inCall, ended)).toEqual(['call.ended']);
    expect(callEventsOf(inCall, ended)[0]!.data.call).not.toHaveProperty('routing');
  });

  it('transfers: each new transfer and each change of its status or consult phase; back to in_call is no new answer', () => {
    const inCall = next(base, { status: 'in_call' });
    const details = {
      callSourceId: 'r1',
      callSourceCallId: 'sip',
      transferringStatus: 'transferring' as const,
      callerId: null,
      destinationType: 'External' as const,
      destinationNumber: '+14155550123',
      transferMode: 'warm' as const,
      requestedBy: 'agent' as const,
      startedAt: 'a',
      consultPhase: 'consulting_ringing' as const,
    };
    const t1 = next(inCall, { status: 'transferring', transferringDetails: details });
    expect(types(inCall, t1)).toEqual(['call.transfer']);
    const t2 = next(t1, {
      transferringDetails: { ...details, consultPhase: 'consulting_dest' },
    });
    expect(types(t1, t2)).toEqual(['call.transfer']);
    expect(types(t2, next(t2, { networkQuality: undefined }))).toEqual([]);
    const back = next(t2, {
      status: 'in_call',
      transferringDetails: {
        ...details,
        transferringStatus: 'failed',
        consultPhase: 'back_with_caller',
      },
    });
    expect(types(t2, back)).toEqual(['call.transfer']);
  });

  it('recording_ready only for an answered call; analysis_completed when results change after the end', () => {
    const answeredAttempt = {
      number: '+12125551234',
      round: 1,
      startedAt: 'a',
      answeredAt: 'b',
    };
    const inCall = next(base, { status: 'in_call', attempts: [answeredAttempt] });
    const ended = next(inCall, { status: 'answered', recordingFileId: 'f1' });
    expect(types(inCall, ended)).toEqual(['call.recording_ready', 'call.ended']);
    const busy = next(base, {
      status: 'busy',
      recordingFileId: 'f2',
      attempts: [{ ...answeredAttempt, answeredAt: undefined }],
    });
    expect(types(base, busy)).toEqual(['call.ended']);
    const summarized = next(ended, { summary: 'Asked for a refund', analysedByAi: 'completed' });
    expect(types(ended, summarized)).toEqual(['call.analysis_completed']);
    expect(types(summarized, next(summarized, {}))).toEqual([]);
    // Results written before the end go with call.ended, not as an analysis.
    expect(types(inCall, next(inCall, { summary: 'x' }))).toEqual([]);
  });
});
