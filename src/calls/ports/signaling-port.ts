// What the calls domain needs from a SIP engine, at the call-leg (dialog)
// level: the embedded stack (src/sip) and the drachtio adapter both fit it.

import type { SipTransport } from '../../model/entities.js';

/** A TLS trunk's own verification material; absent parts: the system's CAs, no client certificate. */
export interface TlsTrunkMaterial {
  /** Names the material (the trunk's id); the engine keeps one context per profile. */
  profile: string;
  ca?: string;
  cert?: string;
  key?: string;
}

export interface DialRequest {
  /** The trunk. No port → RFC 3263 SRV, then 5060. */
  target: {
    host: string;
    port?: number;
    transport: SipTransport;
    /** TLS: the trunk's CA bundle and client certificate (PEM), by trunk id. */
    tls?: TlsTrunkMaterial;
  };
  requestUri: string;
  from: { uri: string; displayName?: string };
  to: { uri: string; displayName?: string };
  /** Extra headers as written on the wire (P-Asserted-Identity, X-…). */
  headers?: Array<[string, string]>;
  sdp: string;
  credentials?: { username: string; password: string };
  /** Our SDP answer to a re-INVITE/UPDATE offer from the far end. */
  answerOffer?: (offer: { sdp: string; hold: boolean }) => string | undefined;
  /**
   * Called synchronously right before the INVITE leaves (after any address
   * resolution); the call records durably that it may have left. A throw
   * keeps the INVITE from being sent.
   */
  onSending?: () => void;
  /**
   * Called synchronously when the dialog is confirmed (before `answered`)
   * and whenever what a later BYE needs changes (before each request of ours
   * in the dialog leaves, a target refresh): the caller keeps it durably so
   * that a BYE can end the dialog after a crash.
   */
  onDialog?: (dialog: DialogSnapshot) => void;
}

/**
 * What a BYE needs to end a confirmed dialog from another process (RFC 3261
 * §12.2.1.1): the dialog ID, the From/To values as sent (tags included), the
 * route set, the remote target, the highest local CSeq used, and where the
 * INVITE went.
 */
export interface DialogSnapshot {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** From header value, our tag included. */
  localParty: string;
  /** To header value, the far end's tag included. */
  remoteParty: string;
  remoteTarget: string;
  routeSet: string[];
  localSeq: number;
  transport: SipTransport;
  destination: { host: string; port: number };
}

export interface LegFailure {
  status: number;
  reason: string;
  warning?: string;
  q850?: number;
  cause: 'response' | 'timeout' | 'transport' | 'cancelled';
  retryAfter?: number;
  /** cause `transport`: what the transport said (TLS handshake, refused connection). */
  transportError?: string;
}

export interface LegEvents {
  provisional: { status: number; reason: string; sdp?: string };
  /** `headers`: the 2xx's header fields, when the engine gives them (names in any case). */
  answered: { sdp: string; headers?: Array<[string, string]> };
  failed: LegFailure;
  ended: { by: 'remote' | 'local'; reason?: { q850?: number; text?: string }; detail?: string };
  reinvite: { sdp: string; hold: boolean };
  dtmf: { digit: string; durationMs: number };
}

/** A blind transfer asked of the far end (RFC 3515 REFER in the dialog). */
export interface ReferRequest {
  /** Refer-To URI, e.g. sip:+14155550123@carrier.example or sip:agent@pbx.example. */
  referTo: string;
  /** Referred-By (RFC 3892), e.g. <sip:+12125550100@gateway>. */
  referredBy?: string;
}
/** What the implicit subscription reports (RFC 3515 §2.4.5, message/sipfrag RFC 3420). */
export interface ReferProgress {
  /** The status line of the sipfrag: 100 trying, 180 ringing, 200 answered, 486 busy, … */
  status: number;
  reason: string;
}
/** How the REFER ended. */
export type ReferOutcome =
  | { kind: 'transferred'; status: number; reason: string } // a 2xx sipfrag
  | { kind: 'refused'; status: number; reason: string } // the REFER itself got a final non-2xx (405, 501, 603, 403 …), or 0 with reason 'timeout'/'transport' when nothing came back
  | { kind: 'failed'; status: number; reason: string } // a final non-2xx sipfrag (486 busy …)
  | { kind: 'no_notify'; status: 0; reason: string }; // REFER accepted but no final NOTIFY in time

export interface SignalingLeg {
  /** The SIP Call-ID. */
  readonly callId: string;
  on<K extends keyof LegEvents & string>(event: K, listener: (e: LegEvents[K]) => void): unknown;
  /** CANCEL before an answer (ends with `failed`, cause `cancelled`). */
  cancel(): void;
  /** BYE after an answer. */
  bye(reason?: { q850?: number; text?: string }): Promise<void>;
  /**
   * Asks the far end whether it still has the dialog (in-dialog OPTIONS):
   * the status of its final response (481: it no longer knows the dialog),
   * 0 when nothing came back at all (timeout, transport error).
   */
  probe?(): Promise<number>;
  /**
   * Blind transfer (RFC 3515): REFER in the confirmed dialog, then the
   * implicit subscription's NOTIFYs (provisional sipfrags via `onProgress`)
   * until a final sipfrag, `Subscription-State: terminated`, or `timeoutMs`
   * (default 32 s) without one ('no_notify'). The leg sends no BYE after
   * 'transferred': the caller decides. One REFER at a time: a second call
   * while one is pending rejects with an Error.
   */
  refer?(
    request: ReferRequest,
    onProgress?: (p: ReferProgress) => void,
    timeoutMs?: number,
  ): Promise<ReferOutcome>;
}

export interface SignalingPort {
  invite(request: DialRequest): SignalingLeg;
  /**
   * Sends BYE in a dialog this process holds no leg for (left by a crash);
   * resolves with the final status (408 no answer, 503 transport error).
   */
  endDialog?(dialog: DialogSnapshot, reason?: { q850?: number; text?: string }): Promise<number>;
}
