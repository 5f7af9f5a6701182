// RFC 3261 §20.10/§25.1 name-addr / addr-spec with header parameters, as in
// From, To, Contact, Route, Record-Route, Refer-To and P-Asserted-Identity.

import { fail, isTokenChar, isWs, quote, readParams, readQuoted, skipWs } from './lexer.js';
import type { NameAddr } from './types.js';
import { formatUri, parseUri } from './uri.js';

/**
 * Parses one name-addr or addr-spec (one element of a list header; use
 * getHeaders to split Contact/Route lists). Without <>, the URI ends at the
 * first ';' or LWS and what follows are header parameters (RFC 3261 §20).
 */
export function parseNameAddr(text: string): NameAddr {
  const s = text;
  let i = skipWs(s, 0);
  let displayName: string | undefined;
  let uriStart: number;
  let uriEnd: number;
  let end: number;
  if (s.charCodeAt(i) === 0x22) {
    // display-name as quoted-string, then LAQUOT
    const q = readQuoted(s, i);
    displayName = q.text;
    i = skipWs(s, q.end);
    if (s.charCodeAt(i) !== 0x3c) fail('expected "<" after display name');
    uriStart = i + 1;
  } else {
    // display-name = *(token LWS): scan tokens and LWS; '<' ends a display
    // name, ':' means this was a URI scheme (addr-spec without brackets).
    let j = i;
    let sawWs = false;
    while (j < s.length) {
      const c = s.charCodeAt(j);
      if (isTokenChar(c)) j++;
      else if (isWs(c)) {
        sawWs = true;
        j++;
      } else break;
    }
    const c = s.charCodeAt(j);
    if (c === 0x3c) {
      const name = s.slice(i, j).trim();
      if (name) displayName = name;
      uriStart = j + 1;
    } else if (c === 0x3a && !sawWs && j > i) {
      uriStart = -1;
    } else {
      return fail('bad display name or address');
    }
  }
  if (uriStart >= 0) {
    uriEnd = s.indexOf('>', uriStart);
    if (uriEnd < 0) fail('missing ">"');
    end = uriEnd + 1;
  } else {
    // addr-spec: RFC 3261 §20: a URI with ',', '?' or ';' needs <>, so it
    // stops at ';' or LWS, and '?' or ',' inside it is an error (RFC 4475
    // §3.1.2.10 regbadct).
    uriStart = i;
    uriEnd = i;
    while (uriEnd < s.length) {
      const c = s.charCodeAt(uriEnd);
      if (c === 0x3b || isWs(c)) break;
      if (c === 0x3f || c === 0x2c) fail('"?" or "," in an addr-spec without <>');
      uriEnd++;
    }
    end = uriEnd;
  }
  const rawUri = s.slice(uriStart, uriEnd);
  // LAQUOT / RAQUOT allow no LWS inside the brackets (RFC 4475 §3.1.2.15).
  const uri = parseUri(rawUri);
  const params: Record<string, string | null> = {};
  const after = readParams(s, end, params, false);
  if (after !== s.length) fail('trailing text after name-addr');
  const na: NameAddr = { uri, rawUri, params };
  if (displayName !== undefined) na.displayName = displayName;
  return na;
}

/** Formats as `"Display" <uri>;params` (always with <>, so URI parameters
 *  never turn into header parameters). */
export function formatNameAddr(na: NameAddr): string {
  let s = na.displayName !== undefined ? quote(na.displayName) + ' <' : '<';
  s += uriText(na) + '>';
  for (const k in na.params) {
    const v = na.params[k];
    s += v === null || v === undefined ? ';' + k : ';' + k + '=' + v;
  }
  return s;
}

/** rawUri byte-for-byte while it still says what `uri` says, else `uri`
 *  formatted (a caller changed the structured form). */
function uriText(na: NameAddr): string {
  const formatted = formatUri(na.uri);
  if (!na.rawUri || na.rawUri === formatted) return formatted;
  try {
    if (formatUri(parseUri(na.rawUri)) === formatted) return na.rawUri;
  } catch {
    // an unparsable rawUri is not worth keeping
  }
  return formatted;
}
