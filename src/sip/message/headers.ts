// Header access on a parsed or built message. Names may be given in any case
// or compact form; values are the raw (unfolded, trimmed) text.

import { canonicalHeaderName, isListHeader } from './header-names.js';
import type { SipHeader, SipMessage } from './types.js';

/** First value of a header, or undefined. For a list header this is the
 *  whole first line (use getHeaders for elements). */
export function getHeader(msg: SipMessage, name: string): string | undefined {
  const n = canonicalHeaderName(name);
  const hs = msg.headers;
  for (let i = 0; i < hs.length; i++) {
    const h = hs[i]!;
    if (h.name === n) return h.value;
  }
  return undefined;
}

/**
 * All values of a header in wire order. For list headers (RFC 3261 §7.3.1:
 * Via, Route, Contact, Allow, Supported, …) comma-joined lines are split into
 * elements, respecting quoted strings and <…>; empty elements are dropped.
 * Other headers (WWW-Authenticate, Authorization, Date, …) are returned line
 * by line, commas untouched.
 */
export function getHeaders(msg: SipMessage, name: string): string[] {
  const n = canonicalHeaderName(name);
  const split = isListHeader(n);
  const out: string[] = [];
  const hs = msg.headers;
  for (let i = 0; i < hs.length; i++) {
    const h = hs[i]!;
    if (h.name !== n) continue;
    if (split) splitList(h.value, out);
    else out.push(h.value);
  }
  return out;
}

/** Splits a comma-separated header value at top-level commas (outside
 *  quoted strings and angle brackets), trimming elements and dropping empty
 *  ones. Appends to `out` and returns it. */
export function splitList(value: string, out: string[] = []): string[] {
  if (value.indexOf(',') < 0) {
    if (value) out.push(value);
    return out;
  }
  let from = 0;
  let inQuote = false;
  let angle = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (inQuote) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inQuote = false;
    } else if (c === 0x22) inQuote = true;
    else if (c === 0x3c) angle = true;
    else if (c === 0x3e) angle = false;
    else if (c === 0x2c && !angle) {
      const part = value.slice(from, i).trim();
      if (part) out.push(part);
      from = i + 1;
    }
  }
  const part = value.slice(from).trim();
  if (part) out.push(part);
  return out;
}

function checkValue(value: string): void {
  // A CR or LF would end the header line early: header injection.
  if (/[\r\n]/.test(value)) throw new TypeError('SIP header value contains CR or LF');
}

/** Replaces every occurrence of a header with one line at the position of
 *  the first (or at the end when absent). */
export function setHeader(msg: SipMessage, name: string, value: string): void {
  checkValue(value);
  const n = canonicalHeaderName(name);
  const hs = msg.headers;
  let at = -1;
  let w = 0;
  for (let r = 0; r < hs.length; r++) {
    const h = hs[r]!;
    if (h.name === n) {
      if (at >= 0) continue;
      at = w;
    }
    hs[w++] = h;
  }
  hs.length = w;
  if (at >= 0) hs[at] = { name: n, value };
  else hs.push({ name: n, value });
}

/** Appends a header line (after existing lines of the same name, or at the
 *  end). `first: true` puts it before them (e.g. a new top Via). */
export function addHeader(
  msg: SipMessage,
  name: string,
  value: string,
  opts?: { first?: boolean },
): void {
  checkValue(value);
  const n = canonicalHeaderName(name);
  const hs = msg.headers;
  const h: SipHeader = { name: n, value };
  let idx = -1;
  for (let i = 0; i < hs.length; i++) {
    if (hs[i]!.name === n) {
      idx = i;
      if (opts?.first) break;
    }
  }
  if (idx < 0) hs.push(h);
  else hs.splice(opts?.first ? idx : idx + 1, 0, h);
}

/** Removes every line of a header; returns how many were removed. */
export function removeHeader(msg: SipMessage, name: string): number {
  const n = canonicalHeaderName(name);
  const hs = msg.headers;
  let w = 0;
  for (let r = 0; r < hs.length; r++) {
    const h = hs[r]!;
    if (h.name !== n) hs[w++] = h;
  }
  const removed = hs.length - w;
  hs.length = w;
  return removed;
}
