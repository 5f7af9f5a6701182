// Header names: the canonical lower-case long form kept in SipHeader.name,
// the spelling we put on the wire, and which headers are comma lists.

import { isToken } from './lexer.js';

/** RFC 3261 §7.3.3 compact forms, plus those of later extensions. */
const COMPACT: Record<string, string> = {
  a: 'accept-contact', // RFC 3841
  b: 'referred-by', // RFC 3892
  c: 'content-type',
  d: 'request-disposition', // RFC 3841
  e: 'content-encoding',
  f: 'from',
  i: 'call-id',
  j: 'reject-contact', // RFC 3841
  k: 'supported',
  l: 'content-length',
  m: 'contact',
  n: 'identity-info', // RFC 4474
  o: 'event', // RFC 6665
  r: 'refer-to', // RFC 3515
  s: 'subject',
  t: 'to',
  u: 'allow-events', // RFC 6665
  v: 'via',
  x: 'session-expires', // RFC 4028
  y: 'identity', // RFC 8224
};

/** Wire spellings that the capitalise-each-word rule gets wrong. */
const SPECIAL_WIRE: Record<string, string> = {
  'call-id': 'Call-ID',
  cseq: 'CSeq',
  'www-authenticate': 'WWW-Authenticate',
  'mime-version': 'MIME-Version',
  rack: 'RAck',
  rseq: 'RSeq',
  'sip-etag': 'SIP-ETag',
  'sip-if-match': 'SIP-If-Match',
  'p-asserted-identity': 'P-Asserted-Identity',
  'p-preferred-identity': 'P-Preferred-Identity',
};

/**
 * RFC 3261 §7.3.1: headers whose value is a comma-separated list, so that
 * several lines and one comma-joined line mean the same. Authorization and
 * the *-Authenticate headers are NOT lists (their parameters use commas).
 */
const LIST_HEADERS = new Set([
  'via',
  'route',
  'record-route',
  'contact',
  'reason',
  'warning',
  'allow',
  'allow-events',
  'supported',
  'require',
  'proxy-require',
  'unsupported',
  'accept',
  'accept-encoding',
  'accept-language',
  'content-encoding',
  'content-language',
  'call-info',
  'alert-info',
  'error-info',
  'in-reply-to',
  'path',
  'service-route',
  'p-asserted-identity',
  'p-preferred-identity',
  'history-info',
  'accept-contact',
  'reject-contact',
  'security-client',
  'security-server',
  'security-verify',
  'diversion',
]);

export function isListHeader(canonical: string): boolean {
  return LIST_HEADERS.has(canonical);
}

const CACHE_LIMIT = 2048;
const canonicalCache = new Map<string, string>();

/** The canonical lower-case long name for any spelling (case-insensitive,
 *  compact forms expanded, RFC 3261 §7.3.3/§7.3.5). */
export function canonicalHeaderName(name: string): string {
  return canonicalOrUndefined(name) ?? name.toLowerCase();
}

/** As canonicalHeaderName, but undefined when the name is not an RFC 3261
 *  token (the parser rejects such a line). */
export function canonicalOrUndefined(name: string): string | undefined {
  const hit = canonicalCache.get(name);
  if (hit !== undefined) return hit;
  if (!isToken(name)) return undefined;
  const lower = name.toLowerCase();
  const canonical = (lower.length === 1 ? COMPACT[lower] : undefined) ?? lower;
  // Bounded: random header soup must not grow the cache without limit.
  if (canonicalCache.size < CACHE_LIMIT) canonicalCache.set(name, canonical);
  return canonical;
}

const wireCache = new Map<string, string>();

/** The spelling we send: `via` → `Via`, `call-id` → `Call-ID`. */
export function wireHeaderName(canonical: string): string {
  const hit = wireCache.get(canonical);
  if (hit !== undefined) return hit;
  const wire =
    SPECIAL_WIRE[canonical] ??
    canonical.replace(/(^|-)([a-z])/g, (_m, dash: string, ch: string) => dash + ch.toUpperCase());
  if (wireCache.size < CACHE_LIMIT) wireCache.set(canonical, wire);
  return wire;
}
