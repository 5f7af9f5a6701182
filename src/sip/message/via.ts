// RFC 3261 §20.42 Via: sent-protocol sent-by *( SEMI via-params ), several
// comma-separated entries per line allowed, LWS around "/", ":", ";", "=".

import { fail, formatParams, isTokenChar, readParams, skipWs, tokenEnd } from './lexer.js';
import type { Via } from './types.js';
import { parseHostPort } from './uri.js';

function expectSlash(s: string, i: number): number {
  i = skipWs(s, i);
  if (s.charCodeAt(i) !== 0x2f) fail('expected "/" in Via sent-protocol');
  return skipWs(s, i + 1);
}

function readToken(s: string, i: number, what: string): [string, number] {
  const e = tokenEnd(s, i);
  if (e === i) fail('expected ' + what + ' in Via');
  return [s.slice(i, e), e];
}

/** Parses one Via header value into its entries (RFC 3261 §20.42). */
export function parseVia(value: string): Via[] {
  const s = value;
  const out: Via[] = [];
  let i = 0;
  for (;;) {
    i = skipWs(s, i);
    let name: string;
    let version: string;
    let transport: string;
    [name, i] = readToken(s, i, 'protocol name');
    i = expectSlash(s, i);
    [version, i] = readToken(s, i, 'protocol version');
    i = expectSlash(s, i);
    [transport, i] = readToken(s, i, 'transport');
    const ws = skipWs(s, i);
    if (ws === i) fail('expected LWS before Via sent-by');
    i = ws;
    // sent-by = host [ COLON port ]
    const hostStart = i;
    if (s.charCodeAt(i) === 0x5b) {
      const close = s.indexOf(']', i);
      if (close < 0) fail('unterminated IPv6 reference in Via');
      i = close + 1;
    } else {
      while (i < s.length && isTokenChar(s.charCodeAt(i))) i++;
    }
    let hostport = s.slice(hostStart, i);
    let j = skipWs(s, i);
    if (s.charCodeAt(j) === 0x3a) {
      j = skipWs(s, j + 1);
      const pe = tokenEnd(s, j);
      hostport += ':' + s.slice(j, pe);
      i = pe;
    }
    const hp = parseHostPort(hostport);
    const params: Record<string, string | null> = {};
    i = readParams(s, i, params, true);
    const via: Via = {
      protocol: (name + '/' + version).toUpperCase(),
      transport: transport.toUpperCase(),
      host: hp.host,
      params,
    };
    if (hp.port !== undefined) via.port = hp.port;
    const branch = params['branch'];
    if (branch !== undefined) {
      if (branch === null) fail('Via branch without value');
      via.branch = branch;
    }
    const received = params['received'];
    if (received) via.received = received;
    const rport = params['rport'];
    if (rport !== undefined) {
      // RFC 3581 §3: rport with no value asks for the source port.
      if (rport === null) via.rport = null;
      else if (/^\d{1,5}$/.test(rport) && Number(rport) <= 65535) via.rport = Number(rport);
      else fail('bad rport');
    }
    out.push(via);
    if (i >= s.length) return out;
    i++; // the ',' readParams stopped at
  }
}

/** Formats one Via entry. The structured fields win over `params` for
 *  branch, received and rport; other params are written in their order. */
export function formatVia(via: Via): string {
  let s = via.protocol + '/' + via.transport + ' ' + via.host;
  if (via.port !== undefined) s += ':' + via.port;
  const params: Record<string, string | null> = { ...via.params };
  if (via.branch !== undefined) params['branch'] = via.branch;
  else delete params['branch'];
  if (via.received !== undefined) params['received'] = via.received;
  if (via.rport !== undefined) params['rport'] = via.rport === null ? null : String(via.rport);
  return s + formatParams(params);
}
