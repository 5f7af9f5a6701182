// Anti-harassment rule (spec §7, §8; DESIGN "Ambiguities"): per company and
// destination number, outbound only — 3 answered calls per UTC day, 5 per
// rolling 7 days, 3 failed attempts per UTC day, 1 hour between answered
// calls. Refusals are 429 with the §2.4 details.
import type { CallError } from '../call-error.js';
import { callEventsForNumber, type CallHistory } from './call-history.js';
import { refusal } from './refusal.js';

export const ANTI_HARASSMENT_LIMITS = {
  answeredPerUtcDay: 3,
  answeredPerWeek: 5,
  failedPerUtcDay: 3,
  cooldownMs: 60 * 60 * 1000,
} as const;

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

/** The checks in the order they are tried (the first that fails names the refusal). */
export const ANTI_HARASSMENT_ORDER = [
  'daily_call_limit_reached',
  'weekly_call_limit_reached',
  'failed_call_limit_reached',
  'cooldown_period_active',
] as const;
export type AntiHarassmentCode = (typeof ANTI_HARASSMENT_ORDER)[number];
type Code = AntiHarassmentCode;

/** One failing check: its code, when it clears (Unix ms) and why. */
export interface AntiHarassmentFailure {
  code: Code;
  next: number;
  reason: string;
  extra?: Record<string, unknown>;
}

/**
 * The refusal when a call to `phoneNumber` placed at `at` (Unix ms, ≥ `now`)
 * would break the rule, else undefined. `nextAllowedAt` is the latest of the
 * times at which each failing check clears, so a retry then is not refused
 * by another of these checks on the calls known now.
 */
export function antiHarassmentRefusal(
  history: CallHistory,
  companyId: string,
  phoneNumber: string,
  at: number,
  now: number,
  excludeRecordId?: string,
): CallError | undefined {
  return refusalOf(
    antiHarassmentFailures(history, companyId, phoneNumber, at, excludeRecordId),
    now,
  );
}

/** The refusal naming the first failing check, clearing when all of them have. */
export function refusalOf(
  failing: readonly AntiHarassmentFailure[],
  now: number,
): CallError | undefined {
  const first = failing[0];
  if (!first) return undefined;
  const next = Math.max(...failing.map((f) => f.next));
  const extra = failing.find((f) => f.extra)?.extra ?? {};
  return refusal(first.code, first.reason, { now, nextAllowedAt: next, retryable: true }, extra);
}

/** The calls the windows of a call at `at` count changed at or after this (ISO). */
export function antiHarassmentSince(at: number): string {
  return new Date(at - WEEK_MS).toISOString();
}

/** Every check that a call to `phoneNumber` at `at` would fail, in ANTI_HARASSMENT_ORDER. */
export function antiHarassmentFailures(
  history: CallHistory,
  companyId: string,
  phoneNumber: string,
  at: number,
  excludeRecordId?: string,
): AntiHarassmentFailure[] {
  const records = history
    .touchedSince(companyId, phoneNumber, antiHarassmentSince(at))
    .filter((r) => r.id !== excludeRecordId);
  const events = callEventsForNumber(records, phoneNumber).filter((e) => e.at <= at);
  const dayStart = Math.floor(at / DAY_MS) * DAY_MS;
  const nextMidnight = dayStart + DAY_MS;
  const answered = events.filter((e) => e.kind === 'answered');
  const failing: AntiHarassmentFailure[] = [];

  const today = answered.filter((e) => e.at >= dayStart);
  if (today.length >= ANTI_HARASSMENT_LIMITS.answeredPerUtcDay) {
    failing.push({
      code: 'daily_call_limit_reached',
      next: nextMidnight,
      reason: `This number has had ${today.length} answered calls today (UTC); the limit is ${ANTI_HARASSMENT_LIMITS.answeredPerUtcDay} per day.`,
    });
  }
  const week = answered.filter((e) => e.at > at - WEEK_MS);
  if (week.length >= ANTI_HARASSMENT_LIMITS.answeredPerWeek) {
    // Clears when enough of them leave the rolling window to drop below the limit.
    const oldestThatMustLeave = week[week.length - ANTI_HARASSMENT_LIMITS.answeredPerWeek]!;
    failing.push({
      code: 'weekly_call_limit_reached',
      next: oldestThatMustLeave.at + WEEK_MS,
      reason: `This number has had ${week.length} answered calls in the last 7 days; the limit is ${ANTI_HARASSMENT_LIMITS.answeredPerWeek}.`,
    });
  }
  const failed = events.filter((e) => e.kind === 'failed' && e.at >= dayStart);
  if (failed.length >= ANTI_HARASSMENT_LIMITS.failedPerUtcDay) {
    failing.push({
      code: 'failed_call_limit_reached',
      next: nextMidnight,
      reason: `This number has had ${failed.length} failed call attempts today (UTC); the limit is ${ANTI_HARASSMENT_LIMITS.failedPerUtcDay} per day.`,
    });
  }
  const last = answered.reduce<(typeof answered)[number] | undefined>(
    (best, e) => (!best || (e.endedAt ?? e.at) > (best.endedAt ?? best.at) ? e : best),
    undefined,
  );
  if (last) {
    const clears = (last.endedAt ?? last.at) + ANTI_HARASSMENT_LIMITS.cooldownMs;
    if (clears > at) {
      failing.push({
        code: 'cooldown_period_active',
        next: clears,
        reason:
          'A call to this number was answered less than 1 hour ago; answered calls must be at least 1 hour apart.',
        extra: { lastCallAt: new Date(last.endedAt ?? last.at).toISOString() },
      });
    }
  }

  return failing;
}
