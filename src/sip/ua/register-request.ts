// The REGISTER request of a binding (RFC 3261 §10.2) and what its 2xx
// grants (§10.2.4).

import { getHeader, getHeaders } from '../message/index.js';
import { parseNameAddr } from '../message/name-addr.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import type { TransportProtocol } from '../transport/types.js';
import { ALLOW } from './request-factory.js';

/** One trunk's binding: where to register, as whom, for how long. */
export interface RegistrationBinding {
  /** The trunk's id. */
  id: string;
  /** The registrar (the trunk's host unless the trunk names another). */
  target: { host: string; port?: number; transport: TransportProtocol; tls?: { profile: string } };
  /** The address-of-record's domain (§10.2: the Request-URI is sip:domain). */
  domain: string;
  /** The address-of-record's user; the Contact's user too. */
  username: string;
  /** Digest credentials (authUsername defaults to username). */
  authUsername: string;
  password: string;
  /** What we ask for (§10.2.1.1); the registrar may grant less. */
  expiresSeconds: number;
}

/** Where a binding's REGISTER is in its sequence (§10.2: one Call-ID, CSeq rising). */
export interface RegisterSequence {
  callId: string;
  fromTag: string;
  cseq: number;
}

/** §10.2: the Request-URI names the domain, without a user. */
export function registerRequestUri(spec: RegistrationBinding): string {
  const t = spec.target.transport;
  return `sip:${spec.domain}${t === 'udp' ? '' : `;transport=${t}`}`;
}

/** §10.2: Request-URI the domain, To/From the AOR, our Contact, Expires. */
export function buildRegister(
  spec: RegistrationBinding,
  seq: RegisterSequence,
  o: {
    sentBy: string;
    transport: TransportProtocol;
    branch: string;
    expires: number;
    auth: { name: string; value: string } | undefined;
    userAgent: string;
  },
): SipRequest {
  const aor = `sip:${spec.username}@${spec.domain}`;
  const param = o.transport === 'udp' ? '' : `;transport=${o.transport}`;
  const headers = [
    {
      name: 'via',
      value: `SIP/2.0/${o.transport.toUpperCase()} ${o.sentBy};rport;branch=${o.branch}`,
    },
    { name: 'max-forwards', value: '70' },
    { name: 'from', value: `<${aor}>;tag=${seq.fromTag}` },
    { name: 'to', value: `<${aor}>` },
    { name: 'call-id', value: seq.callId },
    { name: 'cseq', value: `${seq.cseq} REGISTER` },
    { name: 'contact', value: `<sip:${spec.username}@${o.sentBy}${param}>` },
    { name: 'expires', value: String(o.expires) },
    { name: 'user-agent', value: o.userAgent },
    { name: 'allow', value: ALLOW },
  ];
  if (o.auth) headers.push({ name: o.auth.name.toLowerCase(), value: o.auth.value });
  return {
    kind: 'request',
    method: 'REGISTER',
    uri: registerRequestUri(spec),
    version: 'SIP/2.0',
    headers,
    body: Buffer.alloc(0),
  };
}

/**
 * §10.2.4: the registrar lists the bindings it keeps, each Contact with its
 * expires; ours is the one with our user at our sent-by. Else the Expires
 * header; undefined when neither says.
 */
export function grantedSeconds(res: SipResponse, user: string, sentBy: string): number | undefined {
  for (const value of getHeaders(res, 'contact')) {
    try {
      const c = parseNameAddr(value);
      const hostPort = c.uri.port !== undefined ? `${c.uri.host}:${c.uri.port}` : c.uri.host;
      if (c.uri.user !== user || hostPort !== sentBy) continue;
      const e = Number(c.params.expires);
      if (Number.isFinite(e) && c.params.expires !== null) return e;
    } catch {
      // a Contact we cannot read is not ours
    }
  }
  const header = Number(getHeader(res, 'expires'));
  return Number.isFinite(header) && getHeader(res, 'expires') !== undefined ? header : undefined;
}
