// RFC 3326 Reason: protocol *( SEMI reason-params ), comma-separated;
// reason-params are cause=1*DIGIT and text=quoted-string (RFC 6432 allows it
// in responses too).

import { splitList } from './headers.js';
import { fail, readParams, tokenEnd, unquote } from './lexer.js';
import type { ReasonValue } from './types.js';

/** Parses one Reason header value (one or more entries). */
export function parseReason(value: string): ReasonValue[] {
  const out: ReasonValue[] = [];
  for (const part of splitList(value)) {
    const pe = tokenEnd(part, 0);
    if (pe === 0) fail('bad Reason protocol');
    const params: Record<string, string | null> = {};
    if (readParams(part, pe, params, false) !== part.length) fail('bad Reason');
    const r: ReasonValue = { protocol: part.slice(0, pe) };
    const cause = params['cause'];
    if (cause !== undefined) {
      if (cause === null || !/^\d{1,9}$/.test(cause)) fail('bad Reason cause');
      r.cause = Number(cause);
    }
    const text = params['text'];
    if (text) r.text = unquote(text);
    out.push(r);
  }
  if (out.length === 0) fail('empty Reason');
  return out;
}

/** The first Q.850 cause among Reason entries (RFC 3326 §2, RFC 6432). */
export function findQ850Cause(values: readonly ReasonValue[]): number | undefined {
  for (const r of values)
    if (r.protocol.toUpperCase() === 'Q.850' && r.cause !== undefined) return r.cause;
  return undefined;
}
