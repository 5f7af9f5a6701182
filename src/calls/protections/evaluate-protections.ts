// The protections of an outbound call (spec §1, §4.1 rules 3-7, §7, §8),
// checked in ONE documented order (docs/decisions/protections.md). A refusal
// throws a CallError in the §2.4 shape; the time and day rules never refuse:
// they move the call to the next allowed instant (a 200 with scheduled true).
import type { Clock } from '../../clock.js';
import type { CompanySettings } from '../../model/entities.js';
import { CallError } from '../call-error.js';
import { antiHarassmentRefusal, antiHarassmentSince } from './anti-harassment.js';
import { factsLookups, type CallHistory, type NumberFactsQuery } from './call-history.js';
import { callingRulesFor } from './calling-rules.js';
import { nextAllowedInstant, type ScheduleReason } from './calling-window.js';
import type { DestinationZones } from './destination-zones.js';
import { BLOCKING_STATUSES, duplicateWindowSince, inProgressRefusal } from './in-progress-check.js';
import { optOutRefusal, type OptOutLookup } from './opt-out-check.js';

/** The order in which the rules are checked; the first that fails decides. */
export const PROTECTION_CHECK_ORDER = [
  'callee_opted_out',
  'call_already_in_progress',
  'duplicate_within_60s',
  'daily_call_limit_reached',
  'weekly_call_limit_reached',
  'failed_call_limit_reached',
  'cooldown_period_active',
  'time_and_day_rules',
] as const;

/** A requested scheduledAt further ahead than this is failed_to_schedule_call. */
export const MAX_SCHEDULE_AHEAD_MS = 366 * 86_400_000;

export interface ProtectionInput {
  companyId: string;
  settings: CompanySettings;
  /** E.164 number to be dialed. */
  phoneNumber: string;
  agentId: string | null;
  /** Requested `scheduledAt` (ISO); honoured, and moved forward when the rules ask. */
  scheduledAt?: string | null;
  overrideTimeRestriction: boolean;
  overrideDayRestriction: boolean;
  /** The effective useAntiHarassmentProtection (request, else company default). */
  antiHarassment: boolean;
  /** From `await resolveDestinationZones(phoneNumber)`. */
  destination: DestinationZones;
}

export interface ProtectionDeps {
  history: CallHistory;
  optOuts: OptOutLookup;
  clock: Clock;
}

interface DecisionBase {
  /** ISO instant the call may be dialed. */
  at: string;
  /** Zones the time and day rules were applied in (keep on the record). */
  zones: string[];
  zoneSource: 'number' | 'default';
  country: string | null;
}

export type ProtectionDecision =
  | ({ kind: 'allow' } & DecisionBase)
  | ({
      kind: 'schedule';
      /** Why: the rules moved it, or the request asked for a later time. */
      reason: ScheduleReason | 'scheduled_at_requested';
      blockedDay?: 'weekend' | 'public_holiday' | 'blocked_date';
    } & DecisionBase);

/**
 * Checks a new call request. Synchronous (run it and the record insert in
 * one SQLite transaction, so two requests cannot both pass); the zones are
 * resolved beforehand (async).
 */
export function evaluateProtections(
  input: ProtectionInput,
  deps: ProtectionDeps,
): ProtectionDecision {
  const now = deps.clock.now();
  const requested = input.scheduledAt ? Date.parse(input.scheduledAt) : NaN;
  if (!Number.isNaN(requested) && requested - now > MAX_SCHEDULE_AHEAD_MS) {
    throw new CallError(
      'failed_to_schedule_call',
      'scheduledAt is more than 366 days ahead; a call cannot be scheduled that far.',
    );
  }
  const planned = Number.isNaN(requested) ? now : Math.max(now, requested);
  const antiHarassment = input.antiHarassment && !isTestNumber(input.settings, input.phoneNumber);
  // Everything the checks read, in one read; their arguments are the checks' own.
  const q: NumberFactsQuery = {
    companyId: input.companyId,
    phoneNumber: input.phoneNumber,
    agentId: input.agentId,
    openStatuses: BLOCKING_STATUSES,
    agentSince: duplicateWindowSince(now),
    touchedSince: antiHarassment ? antiHarassmentSince(planned) : null,
  };
  const { history, optOuts } = factsLookups(q, deps.history.numberFacts(q), deps);
  const refusal =
    optOutRefusal(optOuts, input.companyId, input.phoneNumber, planned, now) ??
    inProgressRefusal(history, input.companyId, input.phoneNumber, input.agentId, now) ??
    (antiHarassment
      ? antiHarassmentRefusal(history, input.companyId, input.phoneNumber, planned, now)
      : undefined);
  if (refusal) throw refusal;
  return applyTimeAndDayRules(input, planned, now);
}

type TimeAndDayInput = Pick<
  ProtectionInput,
  'settings' | 'destination' | 'overrideTimeRestriction' | 'overrideDayRestriction'
>;

const MINUTE_MS = 60_000;
/** Bound on the memo below (distinct destinations × settings in one minute). */
const MEMO_MAX = 10_000;
const memo = { minute: -1, decisions: new Map<string, ProtectionDecision>() };

/**
 * The time and day rules alone: allow at `planned`, or schedule later.
 *
 * A call for now is judged once per destination per UTC minute: the answer
 * can only change on a minute boundary (windows are "HH:mm", days change at
 * local midnight, and every zone offset and DST switch falls on a whole
 * minute), so the decision at the minute's start holds for all of it. The
 * computation itself costs a few microseconds (tens for a number with many
 * zones: sip-test/load/dial-gate-bench.ts); the memo spares it at request
 * time and again at dial time for every number.
 */
export function applyTimeAndDayRules(
  input: TimeAndDayInput,
  planned: number,
  now: number,
): ProtectionDecision {
  if (planned !== now) return computeTimeAndDayRules(input, planned, now);
  const minute = Math.floor(now / MINUTE_MS);
  if (memo.minute !== minute) {
    memo.minute = minute;
    memo.decisions.clear();
  }
  const key = JSON.stringify([
    input.destination.country,
    input.destination.zones,
    input.overrideTimeRestriction,
    input.overrideDayRestriction,
    input.settings.callingRules ?? null,
  ]);
  let d = memo.decisions.get(key);
  if (!d) {
    const start = minute * MINUTE_MS;
    d = computeTimeAndDayRules(input, start, start);
    if (memo.decisions.size < MEMO_MAX) memo.decisions.set(key, d);
  }
  return d.kind === 'allow' ? { ...d, at: new Date(now).toISOString() } : d;
}

/** The time and day rules computed afresh (no memo). */
export function computeTimeAndDayRules(
  input: TimeAndDayInput,
  planned: number,
  now: number,
): ProtectionDecision {
  const rules = callingRulesFor(input.settings, input.destination.country);
  const active = { time: !input.overrideTimeRestriction, day: !input.overrideDayRestriction };
  const found = nextAllowedInstant(input.destination, planned, rules, active);
  if (!found) {
    throw new CallError(
      'failed_to_schedule_call',
      input.destination.zones.length === 0 && !rules.defaultZone
        ? "The destination's time zone is unknown, so the calling hours cannot be applied."
        : 'The calling rules allow no call to this destination within the next 400 days.',
    );
  }
  const base: DecisionBase = {
    at: new Date(found.at).toISOString(),
    zones: found.zones,
    zoneSource: found.zoneSource,
    country: input.destination.country,
  };
  if (found.reason) {
    return {
      kind: 'schedule',
      reason: found.reason,
      ...(found.blockedDay ? { blockedDay: found.blockedDay } : {}),
      ...base,
    };
  }
  if (found.at > now) return { kind: 'schedule', reason: 'scheduled_at_requested', ...base };
  return { kind: 'allow', ...base };
}

export function isTestNumber(settings: CompanySettings, phoneNumber: string): boolean {
  return Array.isArray(settings.testNumbers) && settings.testNumbers.includes(phoneNumber);
}
