// What follows a finished dial round (spec §2.1 `maxRetries`,
// `retryDelayMinutes`; DESIGN "maxRetries"): a retry after busy, no answer
// (missed), voicemail or failed, up to `maxRetries` rounds in all (0 and 1
// both mean one), `retryDelayMinutes` apart; a dropped call
// (failed_during_call) is retried the same way as `dropped_call`; a callback
// the callee asked for is planned even when the retries are used up. The
// policy only decides: the call session writes the decision. Every planned
// dial passes the dial gate when it is due.
import { MAX_RETRIES, RETRY_DELAY_MINUTES } from '../intake/initiate-call-body.js';
import type { Clock } from '../../clock.js';
import type {
  AttemptStatus,
  CallRecord,
  OutboundResult,
  ScheduledReason,
  SipFailure,
} from '../../model/call-record.js';

/** Outcomes that are retried (spec §2.1 `maxRetries`). */
export const RETRIED_STATUSES: readonly AttemptStatus[] = [
  'busy',
  'missed',
  'voice_mail',
  'failed',
];

/** Failures that no retry can fix: the number does not exist or is malformed. */
const PERMANENT_FAILURES = {
  kinds: ['number_not_in_service', 'invalid_number'],
  reasons: ['caller_does_not_exist', 'wrong_set_number', 'phone_number_not_found'],
};

/** How the round ended. */
export interface RoundOutcome {
  status: AttemptStatus;
  endCallReason: string;
  sipFailure?: SipFailure;
  /** The number that answered, when one did. */
  reachedNumber?: string;
}

/** "Dial round N+1 at `dueAt` for reason `kind`." */
export interface NextDial {
  kind: ScheduledReason;
  /** Unix ms, before the calling rules move it. */
  dueAt: number;
  /** A retry uses up one of `maxRetries`; a callback does not. */
  countsAsRetry: boolean;
  /** A callback dials the number that asked for it; a retry every number again. */
  numbers?: string[];
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
    private readonly clock: Clock,
    opts: RetryPolicyOptions = {},
  ) {
    this.unitMs = opts.retryDelayUnitMs ?? 60_000;
  }

  /** The next dial the round's outcome calls for, or null: the call ends here. */
  decide(
    record: Pick<CallRecord, 'retries' | 'maxRetries' | 'retryDelayMinutes' | 'phoneNumber'> & {
      outboundResult?: OutboundResult;
    },
    outcome: RoundOutcome,
  ): NextDial | null {
    const now = this.clock.now();
    const result = record.outboundResult ?? {};
    if (result.askedToNeverCallAgain) return null;
    // Handed to a person: the conversation goes on there, a callback the agent noted before is moot.
    if (outcome.status === 'transferred') return null;
    const callbackAt = result.dateTimeToCallBack ? Date.parse(result.dateTimeToCallBack) : NaN;
    if (result.askedToCallBackLater && !Number.isNaN(callbackAt)) {
      return {
        kind: 'customer_callback',
        dueAt: Math.max(now, callbackAt),
        countsAsRetry: false,
        numbers: [outcome.reachedNumber ?? record.phoneNumber],
      };
    }
    const dropped = outcome.status === 'failed_during_call';
    if (!dropped && !RETRIED_STATUSES.includes(outcome.status)) return null;
    if (outcome.status === 'failed' && isPermanentFailure(outcome)) return null;
    const maxRounds = Math.max(1, record.maxRetries ?? MAX_RETRIES.default);
    if (record.retries + 1 >= maxRounds) return null;
    const delay = (record.retryDelayMinutes ?? RETRY_DELAY_MINUTES.default) * this.unitMs;
    return { kind: dropped ? 'dropped_call' : 'retry', dueAt: now + delay, countsAsRetry: true };
  }
}

function isPermanentFailure(o: RoundOutcome): boolean {
  const kind = o.sipFailure?.kind;
  return (
    (kind !== undefined && PERMANENT_FAILURES.kinds.includes(kind)) ||
    PERMANENT_FAILURES.reasons.includes(o.endCallReason)
  );
}
