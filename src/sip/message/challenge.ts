// RFC 3261 §20.44 / §25.1 and RFC 7616/8760 digest challenge in
// WWW-Authenticate / Proxy-Authenticate:
//   challenge = ("Digest" LWS digest-cln *(COMMA digest-cln)) / other-challenge

import { fail, quotedEnd, skipWs, tokenEnd, unquote } from './lexer.js';
import type { DigestChallenge } from './types.js';

/** auth-params `name=value` separated by commas; keys lower-cased, quoted
 *  values unquoted. */
export function parseAuthParams(s: string, i: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (;;) {
    i = skipWs(s, i);
    if (i >= s.length) return out;
    const ke = tokenEnd(s, i);
    if (ke === i) fail('bad auth-param name');
    const key = s.slice(i, ke).toLowerCase();
    i = skipWs(s, ke);
    if (s.charCodeAt(i) !== 0x3d) fail('expected "=" in auth-param');
    i = skipWs(s, i + 1);
    const ve = s.charCodeAt(i) === 0x22 ? quotedEnd(s, i) : tokenEnd(s, i);
    if (ve === i) fail('empty auth-param value');
    if (key !== '__proto__' && !Object.hasOwn(out, key)) out[key] = unquote(s.slice(i, ve));
    i = skipWs(s, ve);
    if (i < s.length) {
      if (s.charCodeAt(i) !== 0x2c) fail('expected "," between auth-params');
      i++;
    }
  }
}

/** Parses a WWW-Authenticate / Proxy-Authenticate value. */
export function parseChallenge(value: string): DigestChallenge {
  const s = value.trim();
  const se = tokenEnd(s, 0);
  if (se === 0) fail('missing auth scheme');
  const params = parseAuthParams(s, se);
  const c: DigestChallenge = { scheme: s.slice(0, se) };
  if (params['realm'] !== undefined) c.realm = params['realm'];
  if (params['nonce'] !== undefined) c.nonce = params['nonce'];
  if (params['opaque'] !== undefined) c.opaque = params['opaque'];
  if (params['algorithm'] !== undefined) c.algorithm = params['algorithm'];
  if (params['domain'] !== undefined) c.domain = params['domain'];
  if (params['stale'] !== undefined) c.stale = params['stale'].toLowerCase() === 'true';
  if (params['qop'] !== undefined) {
    // qop-options = "qop" EQUAL LDQUOT qop-value *("," qop-value) RDQUOT
    c.qop = params['qop']
      .split(',')
      .map((q) => q.trim())
      .filter((q) => q.length > 0);
  }
  return c;
}
