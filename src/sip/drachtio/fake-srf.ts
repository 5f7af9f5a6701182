// An in-memory drachtio-srf for tests: `createUAC` calls are recorded and
// scripted by the test (request sent, 180/183, 200 → Dialog, SipError), and
// the connection is driven by hand. Responses and SipErrors are drachtio-srf's
// own classes built from wire text, so header lookups behave as in production.

import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { FakeClock } from '../transport/fake-clock.js';
import type { CallLegEvents, InviteOptions } from '../ua/call-leg-types.js';
import type { DrachtioLeg } from './drachtio-leg.js';
import { DrachtioSignaling } from './drachtio-signaling.js';
import type {
  CreateUacOptions,
  SrfDialog,
  SrfLike,
  SrfMessage,
  SrfReply,
  SrfRequest,
  SrfResponse,
  UacProgressCallbacks,
} from './srf-types.js';

const require = createRequire(import.meta.url);
type Ctor<T> = new (...args: unknown[]) => T;
const SipMessage = require('drachtio-srf/lib/sip-parser/message.js') as Ctor<SrfMessage>;
const Response = require('drachtio-srf/lib/response.js') as Ctor<SrfResponse & { msg: unknown }>;
const SipError = (require('drachtio-srf') as { SipError: Ctor<Error & { res?: SrfResponse }> })
  .SipError;

/** A drachtio-srf Response parsed from a status line, headers and body. */
export function srfResponse(
  status: number,
  reason: string,
  headers: string[] = [],
  body = '',
  toTag: string | null = 'far1',
): SrfResponse {
  const to = `To: <sip:callee@trunk.example>${toTag ? `;tag=${toTag}` : ''}`;
  const raw =
    `SIP/2.0 ${status} ${reason}\r\n${[to, ...headers].join('\r\n')}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const res = new Response();
  res.msg = new SipMessage(raw);
  return res;
}

/** A request the far end sent inside the dialog (BYE, re-INVITE, INFO). */
export function srfRequest(method: string, headers: string[] = [], body = ''): SrfMessage {
  return new SipMessage(
    `${method} sip:gw@127.0.0.1 SIP/2.0\r\n${headers.join('\r\n')}${headers.length ? '\r\n' : ''}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** drachtio-srf's SipError for a final response, as createUAC rejects with it. */
export function sipError(res: SrfResponse): Error {
  const err = new SipError(res.status, res.reason);
  err.res = res;
  return err;
}

export class FakeReply implements SrfReply {
  sent: Array<{ status: number; body?: string; headers?: Record<string, string> }> = [];
  send(status: number, opts: { body?: string; headers?: Record<string, string> } = {}): void {
    this.sent.push({ status, ...opts });
  }
}

export class FakeDialog extends EventEmitter implements SrfDialog {
  sip: { callId: string; localTag: string; remoteTag: string };
  local: { sdp: string; contact: string };
  remote: { sdp: string };
  res?: SrfResponse;
  destroyed: Array<Record<string, string>> = [];
  /** Settles the BYE's transaction; default: at once. */
  byeResult: () => Promise<unknown> = () => Promise.resolve({});

  constructor(callId: string, localSdp: string, remoteSdp: string) {
    super();
    this.sip = { callId, localTag: 'us1', remoteTag: 'far1' };
    this.local = { sdp: localSdp, contact: '<sip:127.0.0.1:5060>' };
    this.remote = { sdp: remoteSdp };
  }

  destroy(opts: { headers?: Record<string, string> } = {}): Promise<unknown> {
    this.destroyed.push(opts.headers ?? {});
    return this.byeResult();
  }

  /** The far end's BYE (drachtio-srf emits 'destroy' with the request). */
  remoteBye(headers: string[] = []): void {
    this.emit('destroy', srfRequest('BYE', headers), 'normal release');
  }

  /** drachtio-server tore the dialog down itself (RFC 4028 expiry): drachtio-srf
   *  hands over the BYE it sent (source application) and its Reason text. */
  serverBye(reasonHeader = 'SIP ;cause=200 ;text="Session timer expired"'): void {
    const text = /text="(.*)"/.exec(reasonHeader)?.[1] ?? reasonHeader;
    this.emit('destroy', srfRequest('BYE', [`Reason: ${reasonHeader}`]), text);
  }

  /** Requests we sent in the dialog, and what drachtio-srf resolves them with. */
  requests: Array<{ method: string; headers?: Record<string, string>; body?: string }> = [];
  requestResult: () => Promise<SrfResponse> = () => Promise.resolve(srfResponse(200, 'OK'));

  request(opts: {
    method: string;
    headers?: Record<string, string>;
    body?: string;
  }): Promise<SrfResponse> {
    this.requests.push(opts);
    return this.requestResult();
  }

  /** A request the far end sends; returns what we answered. */
  incoming(event: 'modify' | 'update' | 'info' | 'notify', req: SrfMessage): FakeReply {
    const reply = new FakeReply();
    this.emit(event, req, reply);
    return reply;
  }
}

/** One createUAC call, scripted by the test. */
export class FakeUac {
  cancels = 0;
  readonly request: SrfRequest;
  private settle!: { resolve: (d: SrfDialog) => void; reject: (e: unknown) => void };
  readonly promise: Promise<SrfDialog>;

  constructor(
    readonly uri: string,
    readonly opts: CreateUacOptions,
    private readonly callbacks: UacProgressCallbacks,
  ) {
    this.promise = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    const callId = opts.headers['Call-ID'] ?? 'fake-call-id';
    const base = srfRequest('INVITE', [`Call-ID: ${callId}`], opts.localSdp);
    this.request = Object.assign(base, {
      method: 'INVITE',
      cancel: (cb?: (err: unknown) => void) => {
        this.cancels++;
        cb?.(null);
      },
    });
  }

  /** drachtio-server sent the INVITE (cbRequest). */
  sent(): void {
    this.callbacks.cbRequest(null, this.request);
  }

  provisional(status: number, reason: string, body = ''): void {
    this.callbacks.cbProvisional(
      srfResponse(status, reason, body ? ['Content-Type: application/sdp'] : [], body),
    );
  }

  /** The far end's 200 (with `headers` beside the SDP). */
  answer(remoteSdp: string, headers?: Record<string, string>): FakeDialog {
    const d = new FakeDialog(
      this.opts.headers['Call-ID'] ?? 'fake-call-id',
      this.opts.localSdp,
      remoteSdp,
    );
    if (headers) {
      d.res = {
        status: 200,
        reason: 'OK',
        headers,
        get: (name) => headers[name],
        has: (name) => name in headers,
      };
    }
    this.settle.resolve(d);
    return d;
  }

  reject(err: unknown): void {
    this.settle.reject(err);
  }
}

export class FakeSrf extends EventEmitter implements SrfLike {
  uacs: FakeUac[] = [];
  connects: Array<{ host: string; port: number; secret: string; reconnect?: object }> = [];
  disconnects = 0;

  connect(opts: { host: string; port: number; secret: string; reconnect?: object }): void {
    this.connects.push(opts);
  }

  disconnect(): void {
    this.disconnects++;
  }

  createUAC(
    uri: string,
    opts: CreateUacOptions,
    callbacks: UacProgressCallbacks,
  ): Promise<SrfDialog> {
    const uac = new FakeUac(uri, opts, callbacks);
    this.uacs.push(uac);
    return uac.promise;
  }

  /** drachtio-server accepted the secret. */
  accept(hostport = 'udp/127.0.0.1:5060,tcp/127.0.0.1:5060'): void {
    this.emit('connect', null, hostport);
  }

  /** The socket failed (drachtio-srf emits 'error', then 'close'). */
  drop(message = 'read ECONNRESET'): void {
    this.emit('error', new Error(message));
    this.emit('close');
  }

  last(): FakeUac {
    const u = this.uacs[this.uacs.length - 1];
    if (!u) throw new Error('no createUAC call');
    return u;
  }
}

// Test helpers: a DialRequest, an event recorder, a connected engine.

export const SDP =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20000 RTP/AVP 0\r\na=sendrecv\r\n';
export const REMOTE = SDP.replace('20000', '30000');

export const dial = (over: Partial<InviteOptions> = {}): InviteOptions => ({
  target: { host: '127.0.0.1', port: 5090, transport: 'udp' },
  requestUri: 'sip:+15550001@127.0.0.1:5090',
  from: { uri: 'sip:+15550100@127.0.0.1' },
  to: { uri: 'sip:+15550001@127.0.0.1:5090' },
  sdp: SDP,
  ...over,
});

export type Seen = Array<
  { [K in keyof CallLegEvents]: [K, CallLegEvents[K]] }[keyof CallLegEvents]
>;

export function record(leg: DrachtioLeg): Seen {
  const seen: Seen = [];
  for (const ev of ['provisional', 'answered', 'failed', 'ended', 'reinvite', 'dtmf'] as const)
    leg.on(ev, (e: unknown) => seen.push([ev, e] as never));
  return seen;
}

export const flush = () => new Promise<void>((r) => setImmediate(r));

export async function connected(
  opts: {
    cancelGuardMs?: number;
    sessionTimer?: { expiresSeconds: number; minSeconds: number };
  } = {},
) {
  const srf = new FakeSrf();
  const clock = new FakeClock();
  const sig = new DrachtioSignaling(
    { host: '127.0.0.1', port: 9022, secret: 'cymru' },
    { createSrf: () => srf, clock, ...opts },
  );
  const ready = sig.connect();
  srf.accept();
  await ready;
  return { srf, clock, sig };
}
