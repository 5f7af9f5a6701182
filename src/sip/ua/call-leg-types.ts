// The public shapes of an outgoing call leg (what a SignalingPort adapter consumes).

import type { DialogSnapshot } from '../dialog/dialog.js';
import type { TlsProfileMaterial } from '../transport/tls-profiles.js';
import type { TransportProtocol } from '../transport/types.js';

export type { DialogSnapshot } from '../dialog/dialog.js';
export type { ReferOutcome, ReferProgress, ReferRequest } from '../dialog/refer-subscription.js';

export interface PartyAddress {
  uri: string;
  displayName?: string;
}

export interface InviteOptions {
  /** Where the INVITE goes: the trunk. No port → RFC 3263 SRV, then 5060. */
  target: {
    host: string;
    port?: number;
    transport: TransportProtocol;
    /** TLS: the trunk's CA bundle and client certificate (PEM), named by `profile`. */
    tls?: TlsProfileMaterial & { profile: string };
  };
  requestUri: string;
  from: PartyAddress;
  to: PartyAddress;
  /** Extra headers (P-Asserted-Identity, X-…), names as written on the wire. */
  headers?: Array<[string, string]>;
  /** SDP offer, opaque. */
  sdp: string;
  credentials?: { username: string; password: string };
  callId?: string;
  /** Supplies the SDP answer to a re-INVITE/UPDATE offer; default: our last
   *  SDP with the direction mirrored (RFC 3264 §6.1). */
  answerOffer?: (offer: ReinviteEvent) => string | undefined;
  /** Called synchronously right before the first INVITE is handed to the
   *  transport (the caller records durably that it may have left); a throw
   *  keeps the INVITE from being sent and fails the leg. */
  onSending?: () => void;
  /** Called synchronously when the dialog is confirmed (before `answered`)
   *  and before each request of ours in it leaves (its CSeq moved), so the
   *  caller can keep what a BYE after a crash needs. A throw is ignored. */
  onDialog?: (dialog: DialogSnapshot) => void;
}

export interface ProvisionalEvent {
  status: number;
  reason: string;
  sdp?: string;
}

export interface AnsweredEvent {
  sdp: string;
  /** Headers of the 2xx (lower-case names), for anything else the caller wants. */
  headers: Array<[string, string]>;
}

export type FailureCause = 'response' | 'timeout' | 'transport' | 'cancelled';

export interface FailedEvent {
  /** Final status; 408 for Timer B, 503 for transport errors. */
  status: number;
  reason: string;
  /** Raw Reason header value(s) of the final response. */
  reasonHeader?: string;
  /** Raw Warning header value. */
  warning?: string;
  /** Warning code and text, when it parsed. */
  warningCode?: number;
  warningText?: string;
  /** Q.850 cause from `Reason: Q.850;cause=N` (RFC 3326). */
  q850?: number;
  cause: FailureCause;
  /** Retry-After seconds (RFC 3261 §20.33). */
  retryAfter?: number;
  /** cause `transport`: what the transport said, e.g. "tls: certificate not
   *  trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY)". */
  transportError?: string;
}

export interface HangupReason {
  q850?: number;
  text?: string;
}

export interface EndedEvent {
  by: 'remote' | 'local';
  /** From the BYE's Reason header (remote) or what `bye()` was given (local). */
  reason?: HangupReason;
  /** Why the stack ended it on its own (e.g. 'session_expired'). */
  detail?: string;
}

export interface ReinviteEvent {
  sdp: string;
  hold: boolean;
  method: 'INVITE' | 'UPDATE';
}

export interface DtmfEvent {
  digit: string;
  durationMs: number;
}

export interface ReferEvent {
  referTo: string;
  referredBy?: string;
}

export interface NotifyEvent {
  event: string;
  subscriptionState?: string;
  contentType?: string;
  body: string;
  /** For Event: refer, the status line of the message/sipfrag body. */
  sipfragStatus?: number;
}

export interface CallLegEvents {
  provisional: ProvisionalEvent;
  answered: AnsweredEvent;
  failed: FailedEvent;
  ended: EndedEvent;
  reinvite: ReinviteEvent;
  dtmf: DtmfEvent;
  refer: ReferEvent;
  notify: NotifyEvent;
}

export interface InfoOptions {
  contentType: string;
  body: string;
}

export type CallLegState = 'resolving' | 'calling' | 'early' | 'confirmed' | 'terminated';
