// Builds the refusals of spec §2.4: a CallError whose details say whether
// and when to retry (§4.1 rules 6-7); the reason text says when the next
// call is allowed.
import { CallError } from '../call-error.js';

export interface RefusalTiming {
  now: number;
  /** Unix ms from which a call is accepted again; null: never (or covered). */
  nextAllowedAt: number | null;
  retryable: boolean;
}

/** Whole seconds to wait, at least 1 (also the Retry-After header). */
export function retryAfterSeconds(now: number, nextAllowedAt: number): number {
  return Math.max(1, Math.ceil((nextAllowedAt - now) / 1000));
}

export function refusal(
  code: string,
  reason: string,
  timing: RefusalTiming,
  extra: Record<string, unknown> = {},
): CallError {
  const details: Record<string, unknown> = { retryable: timing.retryable };
  let text = reason;
  if (timing.nextAllowedAt !== null) {
    const iso = new Date(timing.nextAllowedAt).toISOString();
    details.nextAllowedAt = iso;
    if (timing.retryable) {
      details.retryAfterSeconds = retryAfterSeconds(timing.now, timing.nextAllowedAt);
    }
    text += ` The next call to this number is allowed at ${iso}.`;
  }
  if (!timing.retryable) text += ' Do not resubmit this request.';
  return new CallError(code, text, { ...details, ...extra });
}
