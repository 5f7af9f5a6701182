// Character classes and small scanners shared by the structured readers
// (RFC 3261 §25.1 basic rules). They work on unfolded header values: the
// parser has already turned every folded line into a single SP (§7.3.1).

import { SipParseError } from './types.js';

/** RFC 3261 §25.1 token characters: alphanum / "-" / "." / "!" / "%" / "*" /
 *  "_" / "+" / "`" / "'" / "~". */
const TOKEN = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) TOKEN[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TOKEN[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TOKEN[c] = 1;
for (const ch of "-.!%*_+`'~") TOKEN[ch.charCodeAt(0)] = 1;

export function isTokenChar(c: number): boolean {
  return c < 128 && TOKEN[c] === 1;
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isTokenChar(s.charCodeAt(i))) return false;
  return true;
}

/** SP or HTAB (LWS after unfolding). */
export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

export function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** End index (exclusive) of the token starting at i (i when none). */
export function tokenEnd(s: string, i: number): number {
  while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
  return i;
}

export function fail(what: string): never {
  throw new SipParseError(what);
}

/** RFC 3261 §25.1 quoted-string starting at s[i] === '"'. Returns the
 *  unescaped content and the index after the closing quote. */
export function readQuoted(s: string, i: number): { text: string; end: number } {
  let out = '';
  let from = i + 1;
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) {
      // quoted-pair = "\" (%x00-09 / %x0B-0C / %x0E-7F)
      if (j + 1 >= s.length) break;
      out += s.slice(from, j);
      from = j + 1;
      j++;
    } else if (c === 0x22) {
      return { text: out + s.slice(from, j), end: j + 1 };
    }
  }
  return fail('unterminated quoted-string');
}

/** Index after the quoted-string at s[i] === '"' (no unescaping). */
export function quotedEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return fail('unterminated quoted-string');
}

/** Quotes a display name or parameter text, escaping '"' and '\'. */
export function quote(text: string): string {
  return '"' + text.replace(/["\\]/g, '\\$&') + '"';
}

/** A gen-value (RFC 3261 §25.1: token / host / quoted-string) ends at SP, ';',
 *  ',' or end of text. Host covers IPv6 references in brackets. */
function genValueEnd(s: string, i: number): number {
  if (s.charCodeAt(i) === 0x22) return quotedEnd(s, i);
  if (s.charCodeAt(i) === 0x5b) {
    const close = s.indexOf(']', i);
    if (close < 0) fail('unterminated IPv6 reference');
    return close + 1;
  }
  let j = i;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (isTokenChar(c) || c === 0x3a)
      j++; // ':' for bare IPv6 in received=
    else break;
  }
  return j;
}

/**
 * `*( SEMI generic-param )` from index i (RFC 3261 §25.1, SEMI and EQUAL may
 * carry LWS). Stops at ',' (when `stopAtComma`) or end. Keys are lower-cased;
 * a quoted value keeps its quotes (so it re-serialises as it came); a flag
 * parameter maps to null; the first occurrence of a key wins.
 */
export function readParams(
  s: string,
  i: number,
  params: Record<string, string | null>,
  stopAtComma: boolean,
): number {
  for (;;) {
    i = skipWs(s, i);
    if (i >= s.length) return i;
    const c = s.charCodeAt(i);
    if (c === 0x2c && stopAtComma) return i;
    if (c !== 0x3b) fail('expected ";" before parameter');
    i = skipWs(s, i + 1);
    const ke = tokenEnd(s, i);
    if (ke === i) fail('empty parameter name');
    const key = s.slice(i, ke).toLowerCase();
    i = skipWs(s, ke);
    let value: string | null = null;
    if (s.charCodeAt(i) === 0x3d) {
      i = skipWs(s, i + 1);
      const ve = genValueEnd(s, i);
      if (ve === i) fail('empty parameter value');
      value = s.slice(i, ve);
      i = ve;
    }
    // First occurrence wins; "__proto__" would rewrite the object's prototype.
    if (key !== '__proto__' && !Object.hasOwn(params, key)) params[key] = value;
  }
}

/** Serialises a parameter record as `;k=v;flag`. */
export function formatParams(params: Record<string, string | null>): string {
  let out = '';
  for (const k in params) {
    const v = params[k];
    out += v === null || v === undefined ? ';' + k : ';' + k + '=' + v;
  }
  return out;
}

/** Strips the quotes of a quoted parameter value and unescapes it. */
export function unquote(v: string): string {
  return v.charCodeAt(0) === 0x22 ? readQuoted(v, 0).text : v;
}
