// A live record no session owns (its daemon died, or its session vanished):
// its INVITE may have reached the far end, so it is never dialed again
// blindly. The round ends as call_stuck and goes to the retry policy like
// any failed attempt, which may schedule the next round (dial-path.md).
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { CallRecord, DialedAttempt } from '../../model/call-record.js';
import type { CallStore } from '../ports/call-store.js';
import type { RetryPolicy } from '../scheduling/retry-policy.js';
import { insertScheduleRow, scheduledPatch } from '../scheduling/schedule-call.js';
import type { AttemptOutcome } from './call-attempt.js';
import { callDuration, closeRound } from './round-closing.js';

export interface OrphanDeps {
  store: CallStore;
  clock: Clock;
  log: Logger;
  retries?: RetryPolicy;
  onScheduled?: () => void;
}

export function finishOrphan(
  deps: OrphanDeps,
  rec: CallRecord,
  cause: 'recovery' | 'watchdog',
  /** Kept as endDetail (e.g. dialog_ended_after_restart). */
  detail?: string,
): void {
  const now = new Date(deps.clock.now()).toISOString();
  const attempts = rec.attempts ?? [];
  const lastIndex = attempts.findLastIndex((a) => a.status !== 'skipped');
  const last = lastIndex >= 0 ? (attempts[lastIndex] as DialedAttempt) : undefined;
  const answeredAt = last?.answeredAt ?? rec.startAt;
  const outcome: AttemptOutcome = answeredAt
    ? { status: 'failed_during_call', endCallReason: 'call_stuck', startAt: answeredAt, endAt: now }
    : { status: 'failed', endCallReason: 'call_stuck', endAt: now };
  if (detail) outcome.detail = detail;
  // The record's outboundResult may be an earlier round's (a callback already
  // planned then): only the retry rules apply here.
  const next = deps.retries?.decide({ ...rec, outboundResult: undefined }, outcome) ?? null;
  const closing = closeRound(rec, {
    outcome,
    next,
    ...(next ? { nextDueAt: next.dueAt } : {}),
    duration: callDuration(outcome),
    totalCost: rec.totalCost,
    endedBy: cause,
  });
  const closedAttempts = attempts.map((a, i) =>
    i === lastIndex && last && last.status === undefined
      ? { ...last, status: outcome.status, endCallReason: 'call_stuck', endedAt: now }
      : a,
  );
  const { store } = deps;
  const written = store.unitOfWork.run(() => {
    if (closing.kind === 'final') {
      return store.calls.update(
        rec.id,
        { ...closing.patch, attempts: closedAttempts, status: closing.status },
        now,
        { onlyFrom: [rec.status], detail: cause },
      );
    }
    const row = insertScheduleRow(
      store.schedules,
      rec.companyId,
      { recordId: rec.id, dueAt: closing.dueAt, kind: closing.scheduleKind, round: closing.round },
      now,
    );
    return store.calls.update(
      rec.id,
      {
        ...closing.patch,
        attempts: closedAttempts,
        ...scheduledPatch(closing.scheduleKind, row, now),
      },
      now,
      { onlyFrom: [rec.status], detail: `${cause}:scheduled:${closing.scheduleKind}` },
    );
  });
  if (!written) return;
  deps.log.warn(
    { callId: rec.callId, status: rec.status, next: closing.kind },
    'call left behind by its session finished as call_stuck',
  );
  if (closing.kind === 'next_round') deps.onScheduled?.();
}
