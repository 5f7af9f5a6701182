// A dialog as the UAC sees it (RFC 3261 §12.1.2) and the requests sent
// within it (§12.2.1.1, loose and strict routing per §16.12.1.1 / §12.2.1.1).

import {
  generateBranch,
  getHeader,
  getHeaders,
  parseNameAddr,
  parseUri,
} from '../message/index.js';
import type { SipHeader, SipRequest, SipResponse } from '../message/types.js';
import { SipStackError, type Endpoint, type TransportProtocol } from '../transport/types.js';

export interface DialogIdentity {
  callId: string;
  localTag: string;
  remoteTag: string;
}

/** What the dialog needs from the stack to build a request. */
export interface DialogLocal {
  /** Via sent-by host:port for the dialog's transport. */
  sentBy: string;
  /** Our Contact header value. */
  contact: string;
  userAgent?: string;
}

export interface OutgoingRequest {
  request: SipRequest;
  branch: string;
  destination: Endpoint;
}

/**
 * What it takes to send a request in a confirmed dialog after a restart
 * (a BYE for a dialog a crash left behind): the dialog ID, the parties as
 * written on the wire (tags included), the route set, the remote target,
 * the last local CSeq, and where the INVITE went.
 */
export interface DialogSnapshot {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** From header value (with our tag). */
  localParty: string;
  /** To header value (with the remote tag). */
  remoteParty: string;
  remoteTarget: string;
  routeSet: string[];
  /** The highest CSeq number used in the dialog (a new request uses more). */
  localSeq: number;
  transport: TransportProtocol;
  /** The address the INVITE was sent to (next hop when the URIs name a host). */
  destination: { host: string; port: number };
}

export class Dialog implements DialogIdentity {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** From header value (with our tag), as sent on the INVITE. */
  readonly localParty: string;
  /** To header value (with the remote tag), from the response. */
  readonly remoteParty: string;
  localSeq: number;
  remoteSeq: number | undefined;
  remoteTarget: string;
  readonly routeSet: string[];

  private constructor(
    s: DialogSnapshot,
    private readonly fallback: Endpoint,
    private readonly local: DialogLocal,
  ) {
    this.callId = s.callId;
    this.localParty = s.localParty;
    this.remoteParty = s.remoteParty;
    this.localTag = s.localTag;
    this.remoteTag = s.remoteTag;
    this.localSeq = s.localSeq;
    this.remoteSeq = undefined;
    this.routeSet = [...s.routeSet];
    this.remoteTarget = s.remoteTarget;
  }

  /** §12.1.2: the dialog a 2xx to our INVITE creates (route set = Record-Route
   *  reversed, remote target = Contact). */
  static fromResponse(
    invite: SipRequest,
    res: SipResponse,
    fallback: Endpoint,
    local: DialogLocal,
  ): Dialog {
    const localParty = getHeader(invite, 'from') ?? '';
    const remoteParty = getHeader(res, 'to') ?? '';
    const contact = getHeaders(res, 'contact')[0];
    return new Dialog(
      {
        callId: getHeader(invite, 'call-id') ?? '',
        localParty,
        remoteParty,
        localTag: parseNameAddr(localParty).params.tag ?? '',
        remoteTag: parseNameAddr(remoteParty).params.tag ?? '',
        localSeq: parseInt(getHeader(invite, 'cseq') ?? '1', 10),
        routeSet: getHeaders(res, 'record-route').reverse(),
        remoteTarget: contact ? parseNameAddr(contact).rawUri : invite.uri,
        transport: fallback.transport,
        destination: { host: fallback.host, port: fallback.port },
      },
      fallback,
      local,
    );
  }

  /** A dialog rebuilt from a snapshot (another process made it). */
  static restore(s: DialogSnapshot, local: DialogLocal): Dialog {
    const fallback: Endpoint = {
      transport: s.transport,
      host: s.destination.host,
      port: s.destination.port,
    };
    return new Dialog(s, fallback, local);
  }

  snapshot(): DialogSnapshot {
    return {
      callId: this.callId,
      localTag: this.localTag,
      remoteTag: this.remoteTag,
      localParty: this.localParty,
      remoteParty: this.remoteParty,
      remoteTarget: this.remoteTarget,
      routeSet: [...this.routeSet],
      localSeq: this.localSeq,
      transport: this.fallback.transport,
      destination: { host: this.fallback.host, port: this.fallback.port },
    };
  }

  /** §12.2: is this request part of the dialog? (To tag = ours, From tag = theirs.) */
  matches(req: SipRequest): boolean {
    return (
      getHeader(req, 'call-id') === this.callId &&
      tagOf(getHeader(req, 'to')) === this.localTag &&
      tagOf(getHeader(req, 'from')) === this.remoteTag
    );
  }

  /** §12.2.2: a request with a lower CSeq than the last one is out of order. */
  acceptRemoteSeq(seq: number): boolean {
    if (this.remoteSeq !== undefined && seq < this.remoteSeq) return false;
    this.remoteSeq = seq;
    return true;
  }

  /** §12.2.1.1: a new request in the dialog (not ACK: see `createAck`). */
  createRequest(method: string, extra: SipHeader[] = [], body?: Buffer): OutgoingRequest {
    this.localSeq++;
    return this.build(method, this.localSeq, generateBranch(), extra, body);
  }

  /** §13.2.2.4: the ACK of a 2xx, its own transaction-less request with the
   *  INVITE's CSeq number and a new branch. */
  createAck(inviteSeq: number, extra: SipHeader[] = [], body?: Buffer): OutgoingRequest {
    return this.build('ACK', inviteSeq, generateBranch(), extra, body);
  }

  private build(
    method: string,
    seq: number,
    branch: string,
    extra: SipHeader[],
    body: Buffer | undefined,
  ): OutgoingRequest {
    const transport = this.fallback.transport;
    const headers: SipHeader[] = [
      {
        name: 'via',
        value: `SIP/2.0/${transport.toUpperCase()} ${this.local.sentBy};rport;branch=${branch}`,
      },
      { name: 'max-forwards', value: '70' },
      { name: 'from', value: this.localParty },
      { name: 'to', value: this.remoteParty },
      { name: 'call-id', value: this.callId },
      { name: 'cseq', value: `${seq} ${method}` },
    ];
    let uri = this.remoteTarget;
    const first = this.routeSet[0];
    if (first !== undefined && !isLooseRoute(first)) {
      // §12.2.1.1 strict routing: R-URI = first route, remote target appended.
      uri = parseNameAddr(first).rawUri;
      for (const r of this.routeSet.slice(1)) headers.push({ name: 'route', value: r });
      headers.push({ name: 'route', value: `<${this.remoteTarget}>` });
    } else {
      for (const r of this.routeSet) headers.push({ name: 'route', value: r });
    }
    if (method !== 'ACK' && method !== 'CANCEL')
      headers.push({ name: 'contact', value: this.local.contact });
    if (this.local.userAgent) headers.push({ name: 'user-agent', value: this.local.userAgent });
    for (const h of extra) headers.push(h);
    const request: SipRequest = {
      kind: 'request',
      method,
      uri,
      version: 'SIP/2.0',
      headers,
      body: body ?? Buffer.alloc(0),
    };
    return { request, branch, destination: this.nextHop() };
  }

  /** The first Route, else the remote target; a host name falls back to the
   *  address the INVITE went to (no per-request DNS). */
  nextHop(): Endpoint {
    const first = this.routeSet[0];
    const uriText = first !== undefined ? parseNameAddr(first).rawUri : this.remoteTarget;
    return uriEndpoint(uriText, this.fallback);
  }
}

export function uriEndpoint(uriText: string, fallback: Endpoint): Endpoint {
  let uri;
  try {
    uri = parseUri(uriText);
  } catch {
    return fallback;
  }
  const host = uri.host.startsWith('[') ? uri.host.slice(1, -1) : uri.host;
  if (!/^[\d.]+$/.test(host) && !host.includes(':')) return fallback;
  const t = uri.params.transport?.toLowerCase();
  // RFC 3261 §19.1.2 / RFC 5630: a sips URI or transport=tls is TLS, on 5061 by default.
  const transport =
    uri.scheme === 'sips' || t === 'tls'
      ? 'tls'
      : t === 'tcp' || t === 'udp'
        ? t
        : fallback.transport;
  const port = uri.port ?? (transport === 'tls' ? 5061 : 5060);
  // The next hop over TLS is verified as the trunk was (its name and CA bundle).
  if (transport === 'tls' && fallback.tls) return { transport, host, port, tls: fallback.tls };
  return { transport, host, port };
}

function isLooseRoute(route: string): boolean {
  try {
    return 'lr' in parseNameAddr(route).uri.params;
  } catch {
    throw new SipStackError('bad_route', 'unparsable Record-Route');
  }
}

export function tagOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    return parseNameAddr(value).params.tag ?? undefined;
  } catch {
    return undefined;
  }
}
