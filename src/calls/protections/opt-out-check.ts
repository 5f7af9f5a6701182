// Opt-outs (spec §7 `callee_opted_out`, 403): a permanent one is never
// retried; a temporary one blocks until `blockedUntil`.
import type { OptOut } from '../../model/entities.js';
import type { CallError } from '../call-error.js';
import { refusal } from './refusal.js';

export interface OptOutLookup {
  get(companyId: string, phoneNumber: string): OptOut | undefined;
}

/** The refusal for a call at `at` (Unix ms), or undefined when the number may be called. */
export function optOutRefusal(
  optOuts: OptOutLookup,
  companyId: string,
  phoneNumber: string,
  at: number,
  now: number,
): CallError | undefined {
  const o = optOuts.get(companyId, phoneNumber);
  if (!o) return undefined;
  const until = o.blockedUntil ? Date.parse(o.blockedUntil) : NaN;
  if (!o.permanent && !Number.isNaN(until)) {
    if (until <= at) return undefined;
    return refusal(
      'callee_opted_out',
      'The callee asked not to be called for a while.',
      { now, nextAllowedAt: until, retryable: true },
      { permanent: false, blockedUntil: new Date(until).toISOString() },
    );
  }
  // Permanent, or an opt-out with no end date: never retry; drop the number.
  return refusal(
    'callee_opted_out',
    'The callee asked never to be called again.',
    { now, nextAllowedAt: null, retryable: false },
    { permanent: true },
  );
}
