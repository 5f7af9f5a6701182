// Pure translations between our call-leg shapes and drachtio-srf's: the
// createUAC arguments for a DialRequest, and drachtio-srf's responses,
// errors and in-dialog requests back into leg events. No I/O, no timers.

import type { SipResponse } from '../message/types.js';
import { findQ850Cause, parseReason } from '../message/index.js';
import { parseDtmfInfo } from '../dialog/dtmf-relay.js';
import { isHold } from '../dialog/sdp-direction.js';
import type {
  DtmfEvent,
  FailedEvent,
  HangupReason,
  InviteOptions,
  ProvisionalEvent,
  ReinviteEvent,
} from '../ua/call-leg-types.js';
import {
  checkText,
  failureFromResponse,
  formatParty,
  formatReason,
} from '../ua/request-factory.js';
import type { CreateUacOptions, SipErrorLike, SrfMessage, SrfResponse } from './srf-types.js';

/** What `srf.createUAC(uri, opts, …)` is called with for one DialRequest. */
export function buildUacRequest(
  req: InviteOptions,
  callId: string,
): { uri: string; opts: CreateUacOptions } {
  checkText(req.requestUri);
  checkText(callId);
  // drachtio-srf leaves the From without a user part unless one is passed:
  // the caller ID goes in an explicit From (drachtio-server adds the tag).
  const headers: Record<string, string> = {
    From: formatParty(req.from),
    To: formatParty(req.to),
    'Call-ID': callId,
  };
  const seen = new Map<string, string>(Object.keys(headers).map((k) => [k.toLowerCase(), k]));
  for (const [name, value] of req.headers ?? []) {
    checkText(name);
    checkText(value);
    const key = seen.get(name.toLowerCase());
    // A repeated header becomes one comma-separated value (RFC 3261 §7.3.1).
    if (key !== undefined) headers[key] = `${headers[key]}, ${value}`;
    else {
      headers[name] = value;
      seen.set(name.toLowerCase(), name);
    }
  }
  const opts: CreateUacOptions = { localSdp: req.sdp, headers };
  const proxy = nextHop(req);
  if (proxy) opts.proxy = proxy;
  if (req.credentials) opts.auth = { ...req.credentials };
  return { uri: req.requestUri, opts };
}

/** The trunk as an outbound proxy, only when the Request-URI does not already
 *  name it (drachtio-server then resolves it per RFC 3263). */
export function nextHop(req: InviteOptions): string | undefined {
  const { host, port, transport } = req.target;
  const hostPort = port ? `${host}:${port}` : host;
  const at = req.requestUri.indexOf('@');
  const uriHost = req.requestUri.slice(at + 1).split(/[;?>]/)[0];
  const uriTransport = req.requestUri.startsWith('sips:')
    ? 'tls'
    : (/;transport=(tcp|tls)/i.exec(req.requestUri)?.[1]?.toLowerCase() ?? 'udp');
  if (uriHost === hostPort && uriTransport === transport) return undefined;
  return `sip:${hostPort}${transport === 'udp' ? '' : `;transport=${transport}`}`;
}

/** 180/183 (drachtio-server swallows 100) → `provisional`, with early SDP. */
export function provisionalFromResponse(res: SrfResponse): ProvisionalEvent | undefined {
  if (res.status <= 100 || res.status >= 200) return undefined;
  const sdp = res.body ? res.body : undefined;
  return sdp === undefined
    ? { status: res.status, reason: res.reason }
    : { status: res.status, reason: res.reason, sdp };
}

export function isSipError(err: unknown): err is SipErrorLike {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'SipError' &&
    typeof (err as { status?: unknown }).status === 'number'
  );
}

/** A response that drachtio-server (sofia-sip) made up itself rather than
 *  received: no To tag, which every UAS or proxy response above 100 carries
 *  (RFC 3261 §8.2.6.2, §16.7), or marked as coming from the application. */
export function isLocallyGenerated(res: SrfResponse | undefined): boolean {
  if (!res) return true;
  if (res.source === 'application') return true;
  return !/;\s*tag\s*=/i.test(res.get('To') ?? '');
}

const PHRASES: Record<number, string> = {
  408: 'Request Timeout',
  487: 'Request Terminated',
  503: 'Service Unavailable',
};

/**
 * createUAC's rejection → `failed`. A SipError keeps the status, phrase,
 * Reason (RFC 3326 Q.850 cause), Warning (§20.43) and Retry-After (§20.33)
 * of the final response; anything else (no connection to drachtio-server,
 * a broken socket) is 503 'transport'. Once we cancelled, the cause is
 * 'cancelled' whatever the status; a 408 we never received is 'timeout'.
 */
export function failureFromError(err: unknown, cancelled: boolean): FailedEvent {
  if (!isSipError(err)) {
    return {
      status: 503,
      reason: PHRASES[503]!,
      cause: cancelled ? 'cancelled' : 'transport',
    };
  }
  const res = err.res;
  const local = isLocallyGenerated(res);
  let cause: FailedEvent['cause'] = 'response';
  if (cancelled) cause = 'cancelled';
  else if (err.status === 408 && local) cause = 'timeout';
  else if (err.status === 503 && !res) cause = 'transport';
  const reason = err.reason ?? res?.reason ?? PHRASES[err.status] ?? '';
  return failureFromResponse(asSipResponse(err.status, reason, res), cause);
}

/** Just enough of our own SipResponse for the shared Reason/Warning reader. */
function asSipResponse(status: number, reason: string, res: SrfMessage | undefined): SipResponse {
  const headers: SipResponse['headers'] = [];
  for (const name of ['reason', 'warning', 'retry-after']) {
    const value = res?.get(name);
    if (value !== undefined && value !== '') headers.push({ name, value });
  }
  return { kind: 'response', version: 'SIP/2.0', status, reason, headers, body: Buffer.alloc(0) };
}

/** The Reason header of our BYE (RFC 3326), as drachtio-srf's headers object. */
export function byeHeaders(reason: HangupReason | undefined): Record<string, string> {
  const value = reason ? formatReason(reason) : undefined;
  return value === undefined ? {} : { Reason: value };
}

/** The far end's BYE → `ended.reason` (its Q.850 cause and text, RFC 3326). */
export function hangupReasonFromBye(req: SrfMessage | undefined): HangupReason | undefined {
  const value = req?.get('Reason');
  if (!value) return undefined;
  try {
    const list = parseReason(value);
    const q850 = findQ850Cause(list);
    const text = list[0]?.text;
    return {
      ...(q850 !== undefined ? { q850 } : {}),
      ...(text !== undefined ? { text } : {}),
    };
  } catch {
    return { text: value };
  }
}

/**
 * The BYE drachtio-server hands the application when it tore a dialog down
 * itself because the far end did not refresh the session (drachtio-srf
 * passes its Reason text, "Session timer expired", as the destroy reason).
 */
export function sessionExpiredByServer(req: SrfMessage | undefined, reason?: string): boolean {
  const text = reason ?? req?.get('Reason') ?? '';
  return /session timer expired/i.test(text);
}

/** A re-INVITE or UPDATE carrying an offer (RFC 3264 §8; hold per §8.4). */
export function offerFromRequest(
  req: SrfMessage,
  method: 'INVITE' | 'UPDATE',
): ReinviteEvent | undefined {
  const sdp = req.body;
  if (!sdp) return undefined;
  return { sdp, hold: isHold(sdp), method };
}

/** INFO with application/dtmf-relay or application/dtmf → `dtmf`. */
export function dtmfFromInfo(req: SrfMessage): DtmfEvent | undefined {
  const type = req.get('Content-Type');
  if (!type || !req.body) return undefined;
  return parseDtmfInfo(type, req.body);
}
