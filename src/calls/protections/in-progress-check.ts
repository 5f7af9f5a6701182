// One outbound call per number at a time (spec §3.1, §4.1 rules 5 and 7,
// §7 `call_already_in_progress` 409): a live or scheduled call to the number
// blocks, and so does the same number + agent requested within 60 seconds.
import type { CallRecord } from '../../model/call-record.js';
import type { CallError } from '../call-error.js';
import { dialedAttempts } from '../../model/call-record.js';
import type { CallHistory } from './call-history.js';
import { refusal } from './refusal.js';

/** Statuses of a call that holds (or is about to take) a line. */
export const LIVE_BLOCKING_STATUSES: readonly string[] = [
  'to_be_processed',
  'trying',
  'ringing',
  'session_progress',
  'in_call',
  'transferring',
];
/** Statuses that block a new call to the number (spec §3.1). */
export const BLOCKING_STATUSES: readonly string[] = [...LIVE_BLOCKING_STATUSES, 'scheduled'];

export const DUPLICATE_WINDOW_MS = 60_000;

/** Estimated wait until a live call of this status has ended (retryAfterSeconds). */
const ESTIMATED_WAIT_MS: Readonly<Record<string, number>> = {
  to_be_processed: 30_000,
  trying: 60_000,
  ringing: 60_000,
  session_progress: 60_000,
  in_call: 300_000,
  transferring: 300_000,
};

export interface InProgressOptions {
  /** The record being re-checked (it never blocks itself). */
  excludeRecordId?: string;
  /** Re-check before a scheduled dial: only live calls block, no 60 s rule. */
  liveOnly?: boolean;
}

export function inProgressRefusal(
  history: CallHistory,
  companyId: string,
  phoneNumber: string,
  agentId: string | null,
  now: number,
  opts: InProgressOptions = {},
): CallError | undefined {
  const statuses = opts.liveOnly ? LIVE_BLOCKING_STATUSES : BLOCKING_STATUSES;
  const open = history
    .openForNumber(companyId, phoneNumber, statuses)
    .filter((r) => r.id !== opts.excludeRecordId && blocksNumber(r, phoneNumber));
  const blocking = open.find((r) => r.status === 'scheduled') ?? open[0];
  if (blocking) {
    const scheduled = blocking.status === 'scheduled';
    return refusal(
      'call_already_in_progress',
      scheduled
        ? 'A call to this number is already scheduled and covers this request.'
        : `A call to this number is in progress (${blocking.status}); only one call per number at a time.`,
      {
        now,
        nextAllowedAt: scheduled ? null : now + (ESTIMATED_WAIT_MS[blocking.status] ?? 60_000),
        retryable: !scheduled,
      },
      liveDetails(blocking),
    );
  }
  if (opts.liveOnly) return undefined;
  const recent = history.latestWithAgentSince(
    companyId,
    phoneNumber,
    agentId,
    duplicateWindowSince(now),
  );
  if (recent && recent.id !== opts.excludeRecordId) {
    return refusal(
      'call_already_in_progress',
      'The same number and agent were requested less than 60 seconds ago.',
      { now, nextAllowedAt: Date.parse(recent.createdAt) + DUPLICATE_WINDOW_MS, retryable: true },
      liveDetails(recent),
    );
  }
  return undefined;
}

/** The same number + agent requested after this (ISO) blocks a new request at `now`. */
export function duplicateWindowSince(now: number): string {
  return new Date(now - DUPLICATE_WINDOW_MS).toISOString();
}

function liveDetails(r: CallRecord): Record<string, unknown> {
  const scheduled = r.status === 'scheduled';
  return {
    alreadyScheduled: scheduled,
    liveCallId: r.callId,
    liveCallMongoId: r.id,
    liveCallStatus: r.status,
    ...(scheduled && r.scheduledAt ? { scheduledAt: r.scheduledAt } : {}),
  };
}

/**
 * A record blocks the number when the number is its own; when the number is
 * one of its alternates, only while an attempt to it is under way.
 */
function blocksNumber(r: CallRecord, phoneNumber: string): boolean {
  if (r.phoneNumber === phoneNumber) return true;
  const attempts = dialedAttempts(r);
  const current = attempts[attempts.length - 1];
  return current?.number === phoneNumber && current.endedAt === undefined;
}
