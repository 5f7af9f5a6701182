// What the calls domain needs from a SIP engine, at the call-leg (dialog)
// level: the embedded stack (src/sip) and the drachtio adapter both fit it.

export interface DialRequest {
  /** The trunk. No port → RFC 3263 SRV, then 5060. */
  target: { host: string; port?: number; transport: 'udp' | 'tcp' };
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
}

export interface LegFailure {
  status: number;
  reason: string;
  warning?: string;
  q850?: number;
  cause: 'response' | 'timeout' | 'transport' | 'cancelled';
  retryAfter?: number;
}

export interface LegEvents {
  provisional: { status: number; reason: string; sdp?: string };
  answered: { sdp: string };
  failed: LegFailure;
  ended: { by: 'remote' | 'local'; reason?: { q850?: number; text?: string }; detail?: string };
  reinvite: { sdp: string; hold: boolean };
  dtmf: { digit: string; durationMs: number };
}

export interface SignalingLeg {
  /** The SIP Call-ID. */
  readonly callId: string;
  on<K extends keyof LegEvents & string>(event: K, listener: (e: LegEvents[K]) => void): unknown;
  /** CANCEL before an answer (ends with `failed`, cause `cancelled`). */
  cancel(): void;
  /** BYE after an answer. */
  bye(reason?: { q850?: number; text?: string }): Promise<void>;
}

export interface SignalingPort {
  invite(request: DialRequest): SignalingLeg;
}
