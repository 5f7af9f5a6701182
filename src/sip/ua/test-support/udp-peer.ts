// A scripted UDP far end on loopback for the call-leg tests: it binds
// 127.0.0.1, keeps every message it receives (parsed) in `inbox`, and answers
// or sends what a test tells it to, to the port the last message came from.
// peerTestbed() gives each test a started stack and such a peer, closed after it.

import { createSocket, type Socket } from 'node:dgram';
import { afterEach } from 'vitest';
import { getHeader, parseMessage, parseNameAddr, serializeMessage } from '../../message/index.js';
import type { SipMessage, SipRequest, SipResponse } from '../../message/types.js';
import { createResponse } from '../../transaction/create-response.js';
import type { InviteOptions } from '../call-leg-types.js';
import type { SipStackConfig } from '../config.js';
import { createSipStack, type SipStack } from '../sip-stack.js';

/** An SDP offer/answer body good enough for the legs under test. */
export const SDP =
  'v=0\r\no=gw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

export class UdpPeer {
  /** Everything received and not yet taken by next() / response(), in order. */
  readonly inbox: SipMessage[] = [];
  /** The port the last message came from (where replies go). */
  from = 0;
  /** Requests already returned by next(), by Call-ID, CSeq and To (a retransmission is skipped). */
  private readonly taken = new Set<string>();
  private seq = 100;

  constructor(readonly sock: Socket) {
    sock.on('message', (buf, rinfo) => {
      this.from = rinfo.port;
      this.inbox.push(parseMessage(buf));
    });
  }

  static async create(): Promise<UdpPeer> {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    return new UdpPeer(s);
  }

  get port(): number {
    return this.sock.address().port;
  }

  /**
   * The next request of `method` (retransmissions of one already taken are
   * skipped; the ACKs to two forks differ in their To tag and are both taken).
   */
  async next(method: string, ms = 3000): Promise<SipRequest> {
    return this.take(`${method} in ${ms} ms`, ms, (m) => {
      if (m.kind !== 'request' || m.method !== method) return false;
      const key = `${getHeader(m, 'call-id')} ${getHeader(m, 'cseq')} ${getHeader(m, 'to')}`;
      if (this.taken.has(key)) return 'drop';
      this.taken.add(key);
      return true;
    }) as Promise<SipRequest>;
  }

  /** The next response whose CSeq is `cseq` (e.g. '101 NOTIFY'). */
  async response(cseq: string, ms = 3000): Promise<SipResponse> {
    return this.take(
      `response to ${cseq} in ${ms} ms`,
      ms,
      (m) => m.kind === 'response' && getHeader(m, 'cseq') === cseq,
    ) as Promise<SipResponse>;
  }

  /** Whether a request of `method` is in the inbox (not taken). */
  has(method: string): boolean {
    return this.inbox.some((m) => m.kind === 'request' && m.method === method);
  }

  reply(
    req: SipRequest,
    status: number,
    reason: string,
    toTag?: string,
    headers: Array<[string, string]> = [],
    body?: string,
  ): void {
    const res = createResponse(req, status, reason, {
      toTag,
      headers: [['contact', `<sip:peer@127.0.0.1:${this.port}>`], ...headers],
      body,
      contentType: body ? 'application/sdp' : undefined,
    });
    this.sock.send(serializeMessage(res), this.from, '127.0.0.1');
  }

  /** NOTIFY in the dialog the INVITE made (we are its UAS: From/To swapped); returns its CSeq. */
  notify(invite: SipRequest, toTag: string, state: string, body: string, event = 'refer'): string {
    const cseq = `${++this.seq} NOTIFY`;
    const contact = parseNameAddr(getHeader(invite, 'contact') ?? '').rawUri;
    const req: SipRequest = {
      kind: 'request',
      method: 'NOTIFY',
      uri: contact,
      version: 'SIP/2.0',
      headers: [
        { name: 'via', value: `SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK-n${this.seq}` },
        { name: 'max-forwards', value: '70' },
        { name: 'from', value: `<sip:bob@127.0.0.1>;tag=${toTag}` },
        { name: 'to', value: getHeader(invite, 'from') ?? '' },
        { name: 'call-id', value: getHeader(invite, 'call-id') ?? '' },
        { name: 'cseq', value: cseq },
        { name: 'contact', value: `<sip:peer@127.0.0.1:${this.port}>` },
        { name: 'event', value: event },
        { name: 'subscription-state', value: state },
        { name: 'content-type', value: 'message/sipfrag;version=2.0' },
      ],
      body: Buffer.from(body),
    };
    this.sock.send(serializeMessage(req), this.from, '127.0.0.1');
    return cseq;
  }

  /** Polls the inbox every 10 ms for the first message `pick` takes (true) or drops ('drop'). */
  private async take(
    what: string,
    ms: number,
    pick: (m: SipMessage) => boolean | 'drop',
  ): Promise<SipMessage> {
    const deadline = Date.now() + ms;
    for (;;) {
      for (let i = 0; i < this.inbox.length; i++) {
        const verdict = pick(this.inbox[i]!);
        if (verdict === false) continue;
        const [m] = this.inbox.splice(i, 1);
        if (verdict === true) return m!;
        i--;
      }
      if (Date.now() > deadline) throw new Error(`no ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/**
 * Registers an afterEach that closes the peer and stops the stack a test
 * started; start() and invite() start them.
 */
export function peerTestbed() {
  let stack: SipStack | undefined;
  let peer: UdpPeer | undefined;
  afterEach(async () => {
    peer?.sock.close();
    await stack?.stop();
    stack = undefined;
    peer = undefined;
  });
  const start = async (config: SipStackConfig): Promise<SipStack> => {
    stack = createSipStack(config);
    await stack.start();
    return stack;
  };
  return {
    /** A started stack with `config`. */
    start,
    /** A started stack with `config`, a peer, and the stack's INVITE to bob at the peer. */
    async invite(config: SipStackConfig, options: Partial<InviteOptions> = {}) {
      const started = await start(config);
      peer = await UdpPeer.create();
      const leg = started.invite({
        target: { host: '127.0.0.1', port: peer.port, transport: 'udp' },
        requestUri: `sip:bob@127.0.0.1:${peer.port}`,
        from: { uri: 'sip:gw@127.0.0.1' },
        to: { uri: 'sip:bob@127.0.0.1' },
        sdp: SDP,
        ...options,
      });
      return { stack: started, peer, leg };
    },
  };
}
