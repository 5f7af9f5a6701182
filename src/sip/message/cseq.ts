// RFC 3261 §20.16 CSeq = 1*DIGIT LWS Method.

import { fail, isToken } from './lexer.js';
import type { CSeq } from './types.js';

/** RFC 3261 §8.1.1.5: the sequence number is below 2**31. */
export const MAX_CSEQ = 2 ** 31 - 1;

export function parseCSeq(value: string): CSeq {
  const s = value.trim();
  let i = 0;
  while (i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39) i++;
  if (i === 0 || i > 10) fail('bad CSeq number');
  const seq = Number(s.slice(0, i));
  if (seq > MAX_CSEQ) fail('CSeq number above 2**31-1');
  const c = s.charCodeAt(i);
  if (c !== 0x20 && c !== 0x09) fail('expected LWS in CSeq');
  const method = s.slice(i + 1).trim();
  if (!isToken(method)) fail('bad CSeq method');
  return { seq, method };
}

export function formatCSeq(cseq: CSeq): string {
  return cseq.seq + ' ' + cseq.method;
}
