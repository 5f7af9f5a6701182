// The SIP message model shared by every layer of src/sip/.
//
// Headers are kept as raw (name, value) pairs in wire order: the parser only
// splits lines, and the structured readers in this folder (via, cseq,
// name-addr, uri, reason, warning, auth) parse a value on demand. That keeps
// the receive path cheap for the headers nobody reads.

/** One header line. `name` is the canonical lower-case long form
 *  (`v` → `via`, `i` → `call-id`, RFC 3261 §7.3.3); `value` is trimmed and
 *  unfolded (RFC 3261 §7.3.1). A comma-joined multi-value line stays one entry. */
export interface SipHeader {
  name: string;
  value: string;
}

interface SipMessageBase {
  /** "SIP/2.0" for anything we accept. */
  version: string;
  headers: SipHeader[];
  /** Exactly Content-Length octets (or the rest of a datagram without it). */
  body: Buffer;
}

export interface SipRequest extends SipMessageBase {
  kind: 'request';
  method: string;
  /** Request-URI as it appeared on the wire. */
  uri: string;
}

export interface SipResponse extends SipMessageBase {
  kind: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** RFC 3261 §19.1.1 SIP-URI / SIPS-URI (and tel: as an opaque user part). */
export interface SipUri {
  scheme: string;
  user?: string;
  password?: string;
  host: string;
  port?: number;
  /** uri-parameters; a parameter without value maps to null. Keys lower-case. */
  params: Record<string, string | null>;
  /** ?headers of the URI, unescaped. */
  headers: Record<string, string>;
  /** Any other absolute URI (RFC 3261 §25.1 absoluteURI, e.g. `isbn:…`,
   *  `http://…`): everything after the scheme's colon; host is then ''. */
  opaque?: string;
}

/** name-addr / addr-spec with header parameters (From, To, Contact, Route, PAI). */
export interface NameAddr {
  displayName?: string;
  uri: SipUri;
  /** Raw URI text, kept for re-serialisation byte-for-byte. */
  rawUri: string;
  /** Header parameters (tag, expires, q, …); keys lower-case, flag params → null. */
  params: Record<string, string | null>;
}

/** One Via entry (RFC 3261 §20.42). */
export interface Via {
  protocol: string; // "SIP/2.0"
  transport: string; // upper-case: UDP, TCP, TLS, SCTP, WS…
  host: string;
  port?: number;
  branch?: string;
  received?: string;
  /** RFC 3581: null when present without value, number once filled in. */
  rport?: number | null;
  params: Record<string, string | null>;
}

export interface CSeq {
  seq: number;
  method: string;
}

/** RFC 3326 Reason header entry. */
export interface ReasonValue {
  protocol: string; // "Q.850" or "SIP"
  cause?: number;
  text?: string;
}

/** RFC 3261 §20.43 Warning entry. */
export interface WarningValue {
  code: number;
  agent: string;
  text: string;
}

/** RFC 3261 §20.44 / §22.4 (and RFC 8760) digest challenge. */
export interface DigestChallenge {
  scheme: string; // "Digest"
  realm?: string;
  nonce?: string;
  opaque?: string;
  algorithm?: string; // MD5, MD5-sess, SHA-256, SHA-256-sess
  qop?: string[]; // e.g. ["auth", "auth-int"]
  stale?: boolean;
  domain?: string;
}

/** Thrown by the parser; `status` is the response a request deserves when
 *  enough of it parsed to answer (400, or 505 for a bad version), else absent. */
export class SipParseError extends Error {
  readonly code = 'sip_parse_error';
  constructor(
    message: string,
    readonly status?: 400 | 505,
    /** With `status`: what parsed of the request (start line and the header
     *  lines read so far), enough to build the response (RFC 3261 §8.2.6). */
    readonly request?: SipRequest,
  ) {
    super(message);
    this.name = 'SipParseError';
  }
}
