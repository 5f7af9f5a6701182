// RFC 3261 §19.1 SIP/SIPS URIs, RFC 3966 tel URIs and other absolute URIs
// as opaque text. Parts are unescaped on parse and escaped on format
// (§19.1.2), so parse(format(u)) gives u back.

import { fail } from './lexer.js';
import type { SipUri } from './types.js';

/** Characters left unescaped, per component (RFC 3261 §25.1). */
function table(extra: string): Uint8Array {
  const t = new Uint8Array(128);
  for (let c = 0x30; c <= 0x39; c++) t[c] = 1;
  for (let c = 0x41; c <= 0x5a; c++) t[c] = 1;
  for (let c = 0x61; c <= 0x7a; c++) t[c] = 1;
  for (const ch of "-_.!~*'()" + extra) t[ch.charCodeAt(0)] = 1; // unreserved + extra
  return t;
}
const USER = table('&=+$,;?/'); // user-unreserved
const PASSWORD = table('&=+$,');
const PARAM = table('[]/:&+$'); // param-unreserved
const HEADER = table('[]/?:+$'); // hnv-unreserved

const HEX = '0123456789ABCDEF';

function escape(s: string, allowed: Uint8Array): string {
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 128 || allowed[c] !== 1) break;
    i++;
  }
  if (i === s.length) return s;
  let out = s.slice(0, i);
  for (const byte of Buffer.from(s.slice(i), 'utf8')) {
    out +=
      byte < 128 && allowed[byte] === 1
        ? String.fromCharCode(byte)
        : '%' + HEX[byte >> 4]! + HEX[byte & 15]!;
  }
  return out;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** RFC 3261 §25.1 escaped = "%" HEXDIG HEXDIG; bytes decode as UTF-8. */
export function unescapeUri(s: string): string {
  if (s.indexOf('%') < 0) return s;
  const bytes: number[] = [];
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x25) {
      const hi = hexValue(s.charCodeAt(i + 1));
      const lo = hexValue(s.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) fail('bad %-escape in URI');
      const b = hi * 16 + lo;
      if (b >= 128) ascii = false;
      bytes.push(b);
      i += 2;
    } else if (c >= 128) {
      ascii = false;
      for (const b of Buffer.from(s[i]!, 'utf8')) bytes.push(b);
    } else bytes.push(c);
  }
  return Buffer.from(bytes).toString(ascii ? 'latin1' : 'utf8');
}

function isHostChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2e ||
    c === 0x2d ||
    c === 0x5f // "_": not in RFC 3261 hostname, but seen in the wild
  );
}

/** Host [":" port] (RFC 3261 §25.1 hostport; IPv6reference keeps its []). */
export function parseHostPort(s: string): { host: string; port?: number } {
  let hostEnd: number;
  if (s.charCodeAt(0) === 0x5b) {
    hostEnd = s.indexOf(']') + 1;
    if (hostEnd <= 2) fail('bad IPv6 reference');
    for (let i = 1; i < hostEnd - 1; i++) {
      const c = s.charCodeAt(i);
      if (!(hexValue(c) >= 0 || c === 0x3a || c === 0x2e)) fail('bad IPv6 reference');
    }
  } else {
    hostEnd = 0;
    while (hostEnd < s.length && isHostChar(s.charCodeAt(hostEnd))) hostEnd++;
    if (hostEnd === 0) fail('empty host');
  }
  const host = s.slice(0, hostEnd);
  if (hostEnd === s.length) return { host };
  if (s.charCodeAt(hostEnd) !== 0x3a) fail('bad character in host');
  const digits = s.slice(hostEnd + 1);
  if (!/^\d{1,5}$/.test(digits)) fail('bad port');
  const port = Number(digits);
  if (port > 65535) fail('port out of range');
  return { host, port };
}

/** Parses `;name=value` URI parameters (keys lower-cased, unescaped). */
function parseUriParams(s: string, params: Record<string, string | null>): void {
  if (s.length === 0) return;
  for (const part of s.split(';')) {
    const eq = part.indexOf('=');
    const key = unescapeUri(eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    if (key.length === 0) fail('empty URI parameter');
    if (key === '__proto__' || Object.hasOwn(params, key)) continue;
    params[key] = eq < 0 ? null : unescapeUri(part.slice(eq + 1));
  }
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;

/** Parses a URI (RFC 3261 §19.1.1, RFC 3966, or any absoluteURI as opaque).
 *  Throws SipParseError on bad syntax. */
export function parseUri(text: string): SipUri {
  const colon = text.indexOf(':');
  if (colon <= 0) fail('URI without scheme');
  const scheme = text.slice(0, colon).toLowerCase();
  if (!SCHEME.test(scheme)) fail('bad URI scheme');
  for (let i = colon + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // RFC 3261 §25.1: no LWS, controls, quotes or angle brackets in a URI.
    if (c <= 0x20 || c === 0x7f || c === 0x22 || c === 0x3c || c === 0x3e) {
      fail('bad character in URI');
    }
  }
  const rest = text.slice(colon + 1);
  const uri: SipUri = { scheme, host: '', params: {}, headers: {} };
  if (scheme === 'tel') {
    // RFC 3966: telephone-subscriber *par; kept as user + params.
    const semi = rest.indexOf(';');
    const number = semi < 0 ? rest : rest.slice(0, semi);
    if (number.length === 0) fail('empty tel number');
    uri.user = unescapeUri(number);
    if (semi >= 0) parseUriParams(rest.slice(semi + 1), uri.params);
    return uri;
  }
  if (scheme !== 'sip' && scheme !== 'sips') {
    if (rest.length === 0) fail('empty URI');
    uri.opaque = rest;
    return uri;
  }
  // RFC 3261 §19.1.1: sip:user:password@host:port;uri-parameters?headers
  // '@' cannot appear unescaped after the userinfo, while the user part may
  // hold ';', '?' and '/' (user-unreserved), so the first '@' delimits it.
  const at = rest.indexOf('@');
  let hostFrom = 0;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    const pc = userinfo.indexOf(':');
    const user = pc < 0 ? userinfo : userinfo.slice(0, pc);
    if (user.length === 0) fail('empty user in URI');
    uri.user = unescapeUri(user);
    if (pc >= 0) uri.password = unescapeUri(userinfo.slice(pc + 1));
    hostFrom = at + 1;
  }
  let q = rest.indexOf('?', hostFrom);
  if (q < 0) q = rest.length;
  let semi = rest.indexOf(';', hostFrom);
  if (semi < 0 || semi > q) semi = q;
  const hp = parseHostPort(rest.slice(hostFrom, semi));
  uri.host = hp.host;
  if (hp.port !== undefined) uri.port = hp.port;
  if (semi < q) parseUriParams(rest.slice(semi + 1, q), uri.params);
  if (q < rest.length) {
    for (const part of rest.slice(q + 1).split('&')) {
      const eq = part.indexOf('=');
      if (eq <= 0) fail('bad URI header');
      const key = unescapeUri(part.slice(0, eq));
      if (key === '__proto__' || Object.hasOwn(uri.headers, key)) continue;
      uri.headers[key] = unescapeUri(part.slice(eq + 1));
    }
  }
  return uri;
}

/** Formats a URI, escaping each component as RFC 3261 §19.1.2 requires. */
export function formatUri(uri: SipUri): string {
  if (uri.opaque !== undefined) return uri.scheme + ':' + uri.opaque;
  let s = uri.scheme + ':';
  if (uri.user !== undefined) {
    s += escape(uri.user, USER);
    if (uri.scheme === 'tel') return s + formatUriParams(uri.params);
    if (uri.password !== undefined) s += ':' + escape(uri.password, PASSWORD);
    s += '@';
  }
  s += uri.host;
  if (uri.port !== undefined) s += ':' + uri.port;
  s += formatUriParams(uri.params);
  let sep = '?';
  for (const k in uri.headers) {
    s += sep + escape(k, HEADER) + '=' + escape(uri.headers[k]!, HEADER);
    sep = '&';
  }
  return s;
}

function formatUriParams(params: Record<string, string | null>): string {
  let s = '';
  for (const k in params) {
    const v = params[k];
    s += ';' + escape(k, PARAM) + (v === null || v === undefined ? '' : '=' + escape(v, PARAM));
  }
  return s;
}
