// RFC 3261 §8.2 UAS checks that decide a rejection before the user agent
// looks at a request: well-formedness (400), §8.2.2.1 Request-URI scheme
// (416), §8.2.2.3 Require (420), §8.2.3 content (415), Accept (406), and
// Max-Forwards 0 (483). RFC 4475 §3.3 names the expected answers.

import { parseCSeq } from './cseq.js';
import { getHeader, getHeaders } from './headers.js';
import { parseNameAddr } from './name-addr.js';
import { MAGIC_COOKIE } from './random-ids.js';
import type { SipHeader, SipRequest } from './types.js';
import { parseUri } from './uri.js';
import { parseVia } from './via.js';

export interface RequestCheckOptions {
  /** Option tags we implement (RFC 3261 §8.2.2.3). Default: none. */
  supported?: readonly string[];
  /** Request-URI schemes we serve. Default: sip, sips, tel. */
  uriSchemes?: readonly string[];
  /** Body types we understand (RFC 3261 §8.2.3). Default: application/sdp. */
  acceptTypes?: readonly string[];
  /** Content codings we understand. Default: identity only. */
  acceptEncodings?: readonly string[];
  /** Methods we answer with an SDP body, so an Accept without
   *  application/sdp gets 406. Default: INVITE, OPTIONS. */
  sdpAnswerMethods?: readonly string[];
}

export interface RequestRejection {
  status: number;
  reason: string;
  /** Headers the response must carry (Unsupported, Accept, …). */
  headers?: SipHeader[];
}

const MANDATORY: readonly [string, string][] = [
  ['via', 'Via'],
  ['to', 'To'],
  ['from', 'From'],
  ['call-id', 'Call-ID'],
  ['cseq', 'CSeq'],
];

/** Headers that may appear once (RFC 3261 §7.3.1; RFC 4475 §3.3.8-9). */
const SINGLE: readonly string[] = [
  'from',
  'to',
  'call-id',
  'cseq',
  'max-forwards',
  'content-length',
];

// RFC 3261 §20.17 Date = rfc1123-date, always in GMT (RFC 4475 §3.1.2.9).
const DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function bad(why: string): RequestRejection {
  return { status: 400, reason: 'Bad Request (' + why + ')' };
}

function mediaType(v: string): string {
  const semi = v.indexOf(';');
  return (semi < 0 ? v : v.slice(0, semi)).trim().toLowerCase();
}

/** RFC 3261 §20.1 Accept media-range match (type/subtype, type/*, *\/*). */
function acceptsType(range: string, type: string): boolean {
  const r = mediaType(range);
  if (r === '*/*' || r === type) return true;
  return r.endsWith('/*') && type.startsWith(r.slice(0, -1));
}

/** Syntax of everything a UAS reads before acting (400 when broken). */
function checkSyntax(req: SipRequest): RequestRejection | null {
  for (const [name, wire] of MANDATORY) {
    if (getHeader(req, name) === undefined) return bad('missing ' + wire);
  }
  for (const name of SINGLE) {
    let first: string | undefined;
    for (const h of req.headers) {
      if (h.name !== name) continue;
      if (first === undefined) first = h.value;
      else if (h.value !== first) return bad('conflicting ' + name);
    }
  }
  let vias;
  try {
    vias = getHeaders(req, 'via').flatMap(parseVia);
  } catch {
    return bad('malformed Via');
  }
  if (vias.length === 0) return bad('missing Via');
  // RFC 3261 §8.1.1.6 makes Max-Forwards mandatory, but an RFC 2543 client
  // (no magic cookie in its branch) did not have to send it (RFC 4475 §3.4.1).
  const maxForwards = getHeader(req, 'max-forwards');
  if (maxForwards === undefined && vias[0]!.branch?.startsWith(MAGIC_COOKIE)) {
    return bad('missing Max-Forwards');
  }
  if (maxForwards !== undefined && !/^\d{1,10}$/.test(maxForwards)) {
    return bad('malformed Max-Forwards');
  }
  try {
    const cseq = parseCSeq(getHeader(req, 'cseq')!);
    // RFC 3261 §8.2 / RFC 4475 §3.1.2.17-18: the CSeq method must match.
    if (cseq.method !== req.method) return bad('CSeq method mismatch');
  } catch {
    return bad('malformed CSeq');
  }
  if (/\s/.test(getHeader(req, 'call-id')!)) return bad('malformed Call-ID');
  for (const name of ['from', 'to'] as const) {
    try {
      parseNameAddr(getHeader(req, name)!);
    } catch {
      return bad('malformed ' + (name === 'to' ? 'To' : 'From'));
    }
  }
  for (const c of getHeaders(req, 'contact')) {
    if (c === '*') continue;
    try {
      parseNameAddr(c);
    } catch {
      return bad('malformed Contact');
    }
  }
  const date = getHeader(req, 'date');
  if (date !== undefined && !DATE.test(date)) return bad('malformed Date');
  return null;
}

/**
 * The rejection an incoming request deserves before the UA acts on it, or
 * null to go on. Never answer an ACK: drop it when this returns non-null.
 */
export function checkIncomingRequest(
  req: SipRequest,
  opts: RequestCheckOptions = {},
): RequestRejection | null {
  const syntax = checkSyntax(req);
  if (syntax) return syntax;

  // RFC 3261 §8.2.2.1: Request-URI scheme.
  let uri;
  try {
    uri = parseUri(req.uri);
  } catch {
    return bad('malformed Request-URI');
  }
  const schemes = opts.uriSchemes ?? ['sip', 'sips', 'tel'];
  if (!schemes.includes(uri.scheme)) return { status: 416, reason: 'Unsupported URI Scheme' };
  // RFC 4475 §3.1.2.9 escruri: headers belong in no Request-URI.
  if (Object.keys(uri.headers).length > 0) return bad('headers in Request-URI');

  // RFC 3261 §16.3 step 3 / RFC 4475 §3.3.11: OPTIONS with Max-Forwards 0 is
  // answered by its target; anything else has run out of hops.
  const maxForwards = getHeader(req, 'max-forwards');
  if (maxForwards !== undefined && Number(maxForwards) === 0 && req.method !== 'OPTIONS') {
    return { status: 483, reason: 'Too Many Hops' };
  }

  // RFC 3261 §8.2.2.3: every Require option tag must be supported (not
  // checked on ACK and CANCEL, which repeat the original request's).
  if (req.method !== 'ACK' && req.method !== 'CANCEL') {
    const supported = opts.supported ?? [];
    const missing = getHeaders(req, 'require').filter(
      (t) => !supported.some((s) => s.toLowerCase() === t.toLowerCase()),
    );
    if (missing.length > 0) {
      return {
        status: 420,
        reason: 'Bad Extension',
        headers: [{ name: 'unsupported', value: missing.join(', ') }],
      };
    }
  }

  // RFC 3261 §8.2.3: a body we cannot process gets 415 with what we take.
  const acceptTypes = opts.acceptTypes ?? ['application/sdp'];
  if (req.body.length > 0) {
    const type = getHeader(req, 'content-type');
    if (type === undefined) return bad('body without Content-Type');
    if (!acceptTypes.includes(mediaType(type))) {
      return {
        status: 415,
        reason: 'Unsupported Media Type',
        headers: [{ name: 'accept', value: acceptTypes.join(', ') }],
      };
    }
    const encodings = opts.acceptEncodings ?? ['identity'];
    const unknown = getHeaders(req, 'content-encoding').some(
      (e) => !encodings.includes(e.toLowerCase()),
    );
    if (unknown) {
      return {
        status: 415,
        reason: 'Unsupported Media Type',
        headers: [{ name: 'accept-encoding', value: encodings.join(', ') }],
      };
    }
  }

  // RFC 3261 §20.1 / RFC 4475 §3.3.15 sdp01: we answer with SDP, so an
  // Accept that excludes it (an empty Accept excludes everything) gets 406.
  const sdpMethods = opts.sdpAnswerMethods ?? ['INVITE', 'OPTIONS'];
  if (sdpMethods.includes(req.method) && getHeader(req, 'accept') !== undefined) {
    const ranges = getHeaders(req, 'accept');
    if (!ranges.some((r) => acceptsType(r, 'application/sdp'))) {
      return { status: 406, reason: 'Not Acceptable' };
    }
  }
  return null;
}
