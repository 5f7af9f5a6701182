// What follows a finished dial attempt (spec §2.1 `maxRetries`,
// `retryDelayMinutes`; DESIGN "maxRetries"): a retry after busy, no answer
// (missed), voicemail or failed, up to `maxRetries` attempts in all (0 and 1
// both mean one), `retryDelayMinutes` apart; a dropped call
// (failed_during_call) is retried the same way as `dropped_call`; a callback
// the callee asked for is scheduled even when the retries are used up. Every
// scheduled dial is re-checked by the scheduler before it is placed.
import type { Clock } from '../../clock.js';
import type { CallRecord, SqliteCallRepository } from '../../store/call-repository.js';
import type { CompanySettings } from '../../store/entities.js';
import type { SqliteScheduleRepository } from '../../store/schedule-repository.js';
import { applyTimeAndDayRules } from '../protections/evaluate-protections.js';
import { scheduleCall, type ScheduleResult } from './schedule-call.js';

/** Attempt outcomes that are retried (spec §2.1 `maxRetries`). */
export const RETRIED_STATUSES: readonly string[] = ['busy', 'missed', 'voice_mail', 'failed'];

/** Failures that no retry can fix: the number does not exist or is malformed. */
const PERMANENT_FAILURES = {
  kinds: ['number_not_in_service', 'invalid_number'],
  reasons: ['caller_does_not_exist', 'wrong_set_number', 'phone_number_not_found'],
};

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_MINUTES = 30;

export interface RetryPolicyDeps {
  schedules: SqliteScheduleRepository;
  calls: Pick<SqliteCallRepository, 'getById' | 'update'>;
  companies: { get(id: string): { settings: CompanySettings } | undefined };
  clock: Clock;
}

export interface RetryPolicyOptions {
  /**
   * Length of one "minute" of `retryDelayMinutes`, in ms (default 60000).
   * A test/config knob only: lets SIPp tests retry within seconds.
   */
  retryDelayUnitMs?: number;
}

export class RetryPolicy {
  private readonly unitMs: number;

  constructor(
    private readonly deps: RetryPolicyDeps,
    opts: RetryPolicyOptions = {},
  ) {
    this.unitMs = opts.retryDelayUnitMs ?? 60_000;
  }

  /**
   * Call when a dial attempt has ended, BEFORE writing the final status:
   * `record` carries the attempt's outcome in `status` (busy, missed,
   * voice_mail, failed, failed_during_call, answered, ...) and its
   * `outboundResult`, while the stored record is still open. Returns the
   * schedule when another dial was planned — the record is then `scheduled`
   * and must NOT be finalised — or null: write the final status as usual.
   * Throws `call_already_scheduled` when a dial of the record is already
   * waiting, `failed_to_schedule_call` when the stored record is final.
   */
  onCallFinished(record: CallRecord): ScheduleResult | null {
    const plan = this.plan(record);
    if (!plan) return null;
    const settings = this.deps.companies.get(record.companyId)?.settings ?? {};
    const dueAt = this.moveIntoRules(record, settings, plan.dueAt);
    const retries = typeof record.retries === 'number' ? record.retries : 0;
    return scheduleCall(this.deps, {
      recordId: record.id,
      dueAt,
      kind: plan.kind,
      patch: {
        lastAttemptStatus: record.status,
        ...(plan.kind === 'customer_callback' ? {} : { retries: retries + 1 }),
      },
    });
  }

  /** The next dial the outcome calls for, before the calling rules move it. */
  plan(
    record: CallRecord,
  ): { kind: 'retry' | 'dropped_call' | 'customer_callback'; dueAt: number } | null {
    const now = this.deps.clock.now();
    const result = (record.outboundResult ?? {}) as {
      askedToNeverCallAgain?: boolean;
      askedToCallBackLater?: boolean;
      dateTimeToCallBack?: string;
    };
    if (result.askedToNeverCallAgain) return null;
    const callbackAt = result.dateTimeToCallBack ? Date.parse(result.dateTimeToCallBack) : NaN;
    if (result.askedToCallBackLater && !Number.isNaN(callbackAt)) {
      return { kind: 'customer_callback', dueAt: Math.max(now, callbackAt) };
    }
    const dropped = record.status === 'failed_during_call';
    if (!dropped && !RETRIED_STATUSES.includes(record.status)) return null;
    if (record.status === 'failed' && isPermanentFailure(record)) return null;
    const maxAttempts = Math.max(1, numberOr(record.maxRetries, DEFAULT_MAX_RETRIES));
    const made = numberOr(record.retries, 0) + 1;
    if (made >= maxAttempts) return null;
    const delay = numberOr(record.retryDelayMinutes, DEFAULT_RETRY_DELAY_MINUTES) * this.unitMs;
    return { kind: dropped ? 'dropped_call' : 'retry', dueAt: now + delay };
  }

  /** Moves `at` to the next allowed instant when the record keeps its zones. */
  private moveIntoRules(record: CallRecord, settings: CompanySettings, at: number): number {
    const zones = record.destinationTimeZones;
    if (!Array.isArray(zones) || zones.length === 0) return at; // the scheduler's re-check will
    try {
      const d = applyTimeAndDayRules(
        {
          settings,
          destination: {
            country:
              typeof record.destinationCountry === 'string' ? record.destinationCountry : null,
            zones: zones as string[],
          },
          overrideTimeRestriction: record.overrideTimeRestriction === true,
          overrideDayRestriction: record.overrideDayRestriction === true,
        },
        at,
        at,
      );
      return Date.parse(d.at);
    } catch {
      return at;
    }
  }
}

function isPermanentFailure(record: CallRecord): boolean {
  const kind = (record.sipFailure as { kind?: string } | undefined)?.kind;
  return (
    (kind !== undefined && PERMANENT_FAILURES.kinds.includes(kind)) ||
    PERMANENT_FAILURES.reasons.includes(String(record.endCallReason))
  );
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
