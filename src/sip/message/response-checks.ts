// RFC 3261 §8.1.3 checks a UAC makes on a response before the transaction
// layer sees it: anything that fails is dropped, never answered.

import { parseCSeq } from './cseq.js';
import { getHeader, getHeaders } from './headers.js';
import { parseNameAddr } from './name-addr.js';
import type { SipResponse } from './types.js';
import { parseVia } from './via.js';

/** Why a response must be discarded, or null when it may be processed. */
export function checkIncomingResponse(res: SipResponse): string | null {
  let vias;
  try {
    vias = getHeaders(res, 'via').flatMap(parseVia);
  } catch {
    return 'malformed Via';
  }
  if (vias.length === 0) return 'missing Via';
  // RFC 3261 §8.1.3.3: more than one Via means it was misrouted to us
  // (RFC 4475 §3.3.10 bcast).
  if (vias.length > 1) return 'more than one Via';
  const cseq = getHeader(res, 'cseq');
  if (cseq === undefined) return 'missing CSeq';
  try {
    parseCSeq(cseq);
  } catch {
    return 'malformed CSeq';
  }
  if (getHeader(res, 'call-id') === undefined) return 'missing Call-ID';
  for (const name of ['from', 'to']) {
    const v = getHeader(res, name);
    if (v === undefined) return 'missing ' + name;
    try {
      parseNameAddr(v);
    } catch {
      return 'malformed ' + name;
    }
  }
  return null;
}
