// Requests a UAC builds outside a dialog: the initial INVITE (RFC 3261 §8.1.1)
// and its CANCEL (§9.1).

import { findQ850Cause, getHeader, parseReason, parseWarning } from '../message/index.js';
import type { SipHeader, SipRequest, SipResponse } from '../message/types.js';
import type { TransportProtocol } from '../transport/types.js';
import { SipStackError } from '../transport/types.js';
import type { FailedEvent, FailureCause, PartyAddress } from './call-leg-types.js';

export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, NOTIFY, REFER';

export interface InviteParts {
  requestUri: string;
  from: string;
  to: string;
  callId: string;
  seq: number;
  branch: string;
  transport: TransportProtocol;
  sentBy: string;
  contact: string;
  userAgent: string;
  extra: ReadonlyArray<readonly [string, string]>;
  auth?: { name: string; value: string };
  sdp: Buffer;
}

/** §8.1.1: the mandatory headers, then ours and the caller's. */
export function buildInvite(p: InviteParts): SipRequest {
  const headers: SipHeader[] = [
    {
      name: 'via',
      value: `SIP/2.0/${p.transport.toUpperCase()} ${p.sentBy};rport;branch=${p.branch}`,
    },
    { name: 'max-forwards', value: '70' },
    { name: 'from', value: p.from },
    { name: 'to', value: p.to },
    { name: 'call-id', value: p.callId },
    { name: 'cseq', value: `${p.seq} INVITE` },
    { name: 'contact', value: p.contact },
    { name: 'user-agent', value: p.userAgent },
    { name: 'allow', value: ALLOW },
    { name: 'supported', value: 'timer' }, // RFC 4028 §7.1: the peer may ask for session timers
  ];
  if (p.auth) headers.push({ name: p.auth.name, value: p.auth.value });
  for (const [name, value] of p.extra) headers.push({ name: name.toLowerCase(), value });
  headers.push({ name: 'content-type', value: 'application/sdp' });
  return {
    kind: 'request',
    method: 'INVITE',
    uri: p.requestUri,
    version: 'SIP/2.0',
    headers,
    body: p.sdp,
  };
}

/** §9.1: CANCEL copies Request-URI, Call-ID, To, From, the CSeq number, the
 *  top Via (same branch) and the Route headers of the INVITE. */
export function buildCancel(invite: SipRequest): SipRequest {
  const headers: SipHeader[] = [];
  let viaDone = false;
  for (const h of invite.headers) {
    if (h.name === 'via' && !viaDone) {
      headers.push(h);
      viaDone = true;
    } else if (h.name === 'from' || h.name === 'to' || h.name === 'call-id' || h.name === 'route') {
      headers.push(h);
    } else if (h.name === 'cseq') {
      headers.push({ name: 'cseq', value: `${parseInt(h.value, 10)} CANCEL` });
    }
  }
  headers.push({ name: 'max-forwards', value: '70' });
  return {
    kind: 'request',
    method: 'CANCEL',
    uri: invite.uri,
    version: 'SIP/2.0',
    headers,
    body: Buffer.alloc(0),
  };
}

/** A name-addr for From/To from caller input; rejects CR/LF (header injection). */
export function formatParty(p: PartyAddress, tag?: string): string {
  checkText(p.uri);
  let s = `<${p.uri}>`;
  if (p.displayName) {
    checkText(p.displayName);
    s = `"${p.displayName.replace(/(["\\])/g, '\\$1')}" ${s}`;
  }
  return tag ? `${s};tag=${tag}` : s;
}

export function checkText(s: string): void {
  if (/[\r\n\0]/.test(s))
    throw new SipStackError('invalid_header', 'header text contains CR, LF or NUL');
}

/** The `failed` event for a final response, with Reason (RFC 3326), Warning
 *  (§20.43) and Retry-After (§20.33) read out. */
export function failureFromResponse(res: SipResponse, cause: FailureCause): FailedEvent {
  const ev: FailedEvent = { status: res.status, reason: res.reason, cause };
  const reason = getHeader(res, 'reason');
  if (reason !== undefined) {
    ev.reasonHeader = reason;
    try {
      const q850 = findQ850Cause(parseReason(reason));
      if (q850 !== undefined) ev.q850 = q850;
    } catch {
      // An unparsable Reason is still reported raw.
    }
  }
  const warning = getHeader(res, 'warning');
  if (warning !== undefined) {
    ev.warning = warning;
    try {
      const w = parseWarning(warning)[0];
      if (w) {
        ev.warningCode = w.code;
        ev.warningText = w.text;
      }
    } catch {
      // Reported raw only.
    }
  }
  const retry = getHeader(res, 'retry-after');
  if (retry !== undefined) {
    const n = parseInt(retry, 10);
    if (Number.isFinite(n) && n >= 0) ev.retryAfter = n;
  }
  return ev;
}

/** RFC 3326 Reason header value for a BYE. */
export function formatReason(r: { q850?: number; text?: string }): string | undefined {
  if (r.q850 === undefined && r.text === undefined) return undefined;
  let v = `Q.850;cause=${r.q850 ?? 16}`;
  if (r.text !== undefined) {
    checkText(r.text);
    v += `;text="${r.text.replace(/(["\\])/g, '\\$1')}"`;
  }
  return v;
}
