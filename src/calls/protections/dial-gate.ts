// The one protection gate every INVITE passes (docs/decisions/dial-path.md;
// DESIGN "Ambiguities": every number a request dials passes the protections
// at dial time, judged for that number). Synchronous: run it and the write
// that marks the attempt in one unit of work, so two dials cannot both pass.
import type { CallRecord, SkipReason } from '../../model/call-record.js';
import type { CompanySettings } from '../../model/entities.js';
import type { Clock } from '../../clock.js';
import type { CallError } from '../call-error.js';
import { antiHarassmentFailures, refusalOf, type AntiHarassmentCode } from './anti-harassment.js';
import type { CallHistory } from './call-history.js';
import type { DestinationZones } from './destination-zones.js';
import { applyTimeAndDayRules, isTestNumber } from './evaluate-protections.js';
import { inProgressRefusal } from './in-progress-check.js';
import { optOutRefusal, type OptOutLookup } from './opt-out-check.js';

/** What kind of dial asks: a callback the callee asked for is not held off by its own limits. */
export type DialPurpose = 'dial' | 'customer_callback';

/** Limits a callback the callee asked for does not wait for (docs/decisions/protections.md). */
const CALLBACK_IGNORES: ReadonlySet<AntiHarassmentCode> = new Set([
  'daily_call_limit_reached',
  'weekly_call_limit_reached',
  'cooldown_period_active',
]);

export interface GateInput {
  record: Pick<
    CallRecord,
    | 'id'
    | 'companyId'
    | 'agentId'
    | 'useAntiHarassmentProtection'
    | 'overrideTimeRestriction'
    | 'overrideDayRestriction'
  >;
  /** The number about to be dialed (primary or alternate). */
  number: string;
  /** That number's zones and country. */
  destination: DestinationZones;
  settings: CompanySettings;
  purpose: DialPurpose;
}

export interface GateDeps {
  history: CallHistory;
  optOuts: OptOutLookup;
  clock: Clock;
}

export type GateVerdict =
  | { kind: 'dial'; zones: string[] }
  | {
      kind: 'skip';
      reason: SkipReason;
      /** Unix ms from which the number may be dialed; undefined: never. */
      nextAllowedAt: number | undefined;
      error?: CallError;
    };

/**
 * May `number` be dialed now? Opt-out, one call per number (this call never
 * blocks itself), the anti-harassment counters of that number, then the
 * calling window in all of its zones and its country's day rule. A refusal
 * that clears later is moved into the calling rules, so `nextAllowedAt` is
 * an instant at which every rule known now allows the dial.
 */
export function checkDial(input: GateInput, deps: GateDeps): GateVerdict {
  const now = deps.clock.now();
  const { record, number, settings } = input;
  const refusal =
    optOutRefusal(deps.optOuts, record.companyId, number, now, now) ??
    inProgressRefusal(deps.history, record.companyId, number, record.agentId, now, {
      excludeRecordId: record.id,
      liveOnly: true,
    }) ??
    antiHarassment(input, deps, now);
  let from = now;
  if (refusal) {
    const next = refusal.details?.nextAllowedAt;
    if (refusal.details?.retryable !== true || typeof next !== 'string') {
      return skip(refusal.code as SkipReason, undefined, refusal);
    }
    from = Date.parse(next);
  }
  const rules = (): ReturnType<typeof applyTimeAndDayRules> | undefined => {
    try {
      return applyTimeAndDayRules(
        {
          settings,
          destination: input.destination,
          overrideTimeRestriction: record.overrideTimeRestriction,
          overrideDayRestriction: record.overrideDayRestriction,
        },
        from,
        now,
      );
    } catch {
      return undefined; // no allowed instant within the horizon, or no zone at all
    }
  };
  const d = rules();
  if (!d) return skip(refusal ? (refusal.code as SkipReason) : 'blocked_day', undefined, refusal);
  if (refusal) return skip(refusal.code as SkipReason, Date.parse(d.at), refusal);
  if (d.kind === 'allow') return { kind: 'dial', zones: d.zones };
  const reason: SkipReason = d.reason === 'blocked_day' ? 'blocked_day' : 'outside_calling_hours';
  return skip(reason, Date.parse(d.at));
}

function antiHarassment(input: GateInput, deps: GateDeps, now: number): CallError | undefined {
  if (!input.record.useAntiHarassmentProtection || isTestNumber(input.settings, input.number)) {
    return undefined;
  }
  const failing = antiHarassmentFailures(
    deps.history,
    input.record.companyId,
    input.number,
    now,
  ).filter((f) => input.purpose !== 'customer_callback' || !CALLBACK_IGNORES.has(f.code));
  return refusalOf(failing, now);
}

function skip(
  reason: SkipReason,
  nextAllowedAt: number | undefined,
  error?: CallError,
): GateVerdict {
  return { kind: 'skip', reason, nextAllowedAt, ...(error ? { error } : {}) };
}
