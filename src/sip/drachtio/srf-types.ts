// The parts of drachtio-srf 5.0.x the adapter touches, as structural types:
// the real `Srf` fits them, and so do the in-memory fakes the tests script.
// Shapes follow drachtio-srf's lib/srf.js, lib/dialog.js and lib/request.js.

/** A SIP message as drachtio-srf hands it over (header names case-insensitive). */
export interface SrfMessage {
  body?: string;
  get(name: string): string | undefined;
  has(name: string): boolean;
}

export interface SrfResponse extends SrfMessage {
  status: number;
  reason: string;
  /** The header fields as drachtio-srf parsed them (name → value). */
  headers?: Record<string, string>;
  /** 'network' for what came off the wire, 'application' for what drachtio-server made. */
  source?: string;
}

/** The INVITE as sent (handed to `cbRequest`); `cancel()` sends CANCEL (RFC 3261 §9.1). */
export interface SrfRequest extends SrfMessage {
  method?: string;
  cancel(callback?: (err: unknown) => void): void;
}

/** The reply handle of an in-dialog request the far end sent. */
export interface SrfReply {
  send(status: number, opts?: { body?: string; headers?: Record<string, string> }): void;
}

/** A confirmed INVITE dialog (createUAC resolves with one on 200 OK). */
export interface SrfDialog {
  sip: { callId: string; localTag?: string; remoteTag?: string };
  local: { sdp: string; contact?: string };
  remote: { sdp: string };
  res?: SrfResponse;
  on(event: 'destroy', listener: (req: SrfMessage, reason?: string) => void): unknown;
  on(
    event: 'modify' | 'update' | 'info' | 'notify',
    listener: (req: SrfMessage, res: SrfReply) => void,
  ): unknown;
  /** Sends BYE (or NOTIFY for a subscription) and forgets the dialog. */
  destroy(opts?: { headers?: Record<string, string> }): Promise<unknown>;
  /** Sends a request in the dialog; resolves with its final response. */
  request?(opts: {
    method: string;
    headers?: Record<string, string>;
    body?: string;
  }): Promise<SrfResponse>;
}

export interface CreateUacOptions {
  localSdp: string;
  /** Next hop, when it is not the Request-URI's host (e.g. `sip:trunk:5060;transport=tcp`). */
  proxy?: string;
  headers: Record<string, string>;
  auth?: { username: string; password: string };
}

export interface UacProgressCallbacks {
  cbRequest: (err: unknown, req?: SrfRequest) => void;
  cbProvisional: (res: SrfResponse) => void;
}

/** drachtio-srf's `Srf` as far as the adapter uses it. */
export interface SrfLike {
  connect(opts: {
    host: string;
    port: number;
    secret: string;
    reconnect?: { maxAttempts?: number; retryMaxDelay?: number };
  }): unknown;
  disconnect(): void;
  on(
    event: 'connect',
    listener: (err: Error | null | undefined, hostport?: string) => void,
  ): unknown;
  on(event: 'error' | 'close', listener: (err?: unknown) => void): unknown;
  createUAC(
    uri: string,
    opts: CreateUacOptions,
    callbacks: UacProgressCallbacks,
  ): Promise<SrfDialog>;
}

/** drachtio-srf's `SipError`: a non-2xx final response. */
export interface SipErrorLike {
  name: string;
  status: number;
  reason?: string;
  res?: SrfResponse;
}
