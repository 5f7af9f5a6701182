// How a dial round ends on the record: the final status, or (when the retry
// policy asks for another round) back to `scheduled` with the next round's
// row. Pure: the call session (or recovery, for a record no session owns)
// writes the result in one unit of work.
import type { CallPatch, CallRecord } from '../../model/call-record.js';
import type { CallStatus } from '../../model/call-status.js';
import type { NextDial } from '../scheduling/retry-policy.js';
import type { AttemptOutcome } from './call-attempt.js';

export interface RoundEnd {
  outcome: AttemptOutcome;
  /** What the retry policy decided (null: the call ends). */
  next: NextDial | null;
  /** The next round's due time, moved into the calling rules. */
  nextDueAt?: number;
  duration: number;
  totalCost: number;
  endedBy?: CallRecord['endedBy'];
}

export type RoundClosing =
  | { kind: 'final'; status: CallStatus; patch: CallPatch }
  | {
      kind: 'next_round';
      round: number;
      dueAt: number;
      scheduleKind: NextDial['kind'];
      /** Written with the scheduled status (scheduleCall adds the scheduling fields). */
      patch: CallPatch;
    };

/** The record write that closes the current round. */
export function closeRound(record: Readonly<CallRecord>, end: RoundEnd): RoundClosing {
  const { outcome } = end;
  const media: CallPatch = {
    totalCost: end.totalCost,
    ...(outcome.networkQuality ? { networkQuality: outcome.networkQuality } : {}),
    ...(outcome.recordingFileId ? { recordingFileId: outcome.recordingFileId } : {}),
  };
  const round = record.dialRound ?? record.retries + 1;
  if (end.next && end.nextDueAt !== undefined) {
    return {
      kind: 'next_round',
      round: round + 1,
      dueAt: end.nextDueAt,
      scheduleKind: end.next.kind,
      patch: {
        ...media,
        lastAttemptStatus: outcome.status,
        dialRound: round + 1,
        ...(end.next.countsAsRetry ? { retries: record.retries + 1 } : {}),
        ...(end.next.numbers?.[0] && end.next.kind === 'customer_callback'
          ? { callbackNumber: end.next.numbers[0] }
          : {}),
      },
    };
  }
  return {
    kind: 'final',
    status: outcome.status,
    patch: {
      ...media,
      endCallReason: outcome.endCallReason,
      ...(outcome.sipFailure ? { sipFailure: outcome.sipFailure } : {}),
      ...(outcome.startAt ? { startAt: outcome.startAt } : {}),
      endAt: outcome.endAt,
      duration: end.duration,
      active: false,
      ...(outcome.detail ? { endDetail: outcome.detail } : {}),
      ...(end.endedBy ? { endedBy: end.endedBy } : {}),
    },
  };
}

/** Seconds between answer and end (0 when never answered). */
export function callDuration(outcome: Pick<AttemptOutcome, 'startAt' | 'endAt'>): number {
  return outcome.startAt
    ? Math.max(0, Math.round((Date.parse(outcome.endAt) - Date.parse(outcome.startAt)) / 1000))
    : 0;
}
