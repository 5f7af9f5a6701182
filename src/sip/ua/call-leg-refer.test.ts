// RFC 3515 blind transfer on an outgoing call leg against a scripted UDP peer
// on loopback (short T1): the REFER as sent, the NOTIFYs of its implicit
// subscription answered 200 and followed to an outcome, one REFER at a time.

import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { getHeader, parseMessage, parseNameAddr, serializeMessage } from '../message/index.js';
import type { SipMessage, SipRequest, SipResponse } from '../message/types.js';
import { createResponse } from '../transaction/create-response.js';
import type { CallLegEvents, DialogSnapshot, ReferProgress } from './call-leg-types.js';
import { createSipStack, type SipStack } from './sip-stack.js';

const SDP =
  'v=0\r\no=gw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

class Peer {
  readonly inbox: SipMessage[] = [];
  from = 0;
  private readonly taken = new Set<string>();
  private seq = 100;
  constructor(readonly sock: Socket) {
    sock.on('message', (buf, rinfo) => {
      this.from = rinfo.port;
      this.inbox.push(parseMessage(buf));
    });
  }
  static async create(): Promise<Peer> {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    return new Peer(s);
  }
  get port(): number {
    return this.sock.address().port;
  }
  async next(method: string, ms = 3000): Promise<SipRequest> {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.inbox.findIndex((m) => m.kind === 'request' && m.method === method);
      if (i >= 0) {
        const req = this.inbox.splice(i, 1)[0] as SipRequest;
        const key = `${getHeader(req, 'call-id')} ${getHeader(req, 'cseq')}`;
        if (!this.taken.has(key)) {
          this.taken.add(key);
          return req;
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`no ${method} in ${ms} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  async response(cseq: string, ms = 3000): Promise<SipResponse> {
    const deadline = Date.now() + ms;
    for (;;) {
      const i = this.inbox.findIndex((m) => m.kind === 'response' && getHeader(m, 'cseq') === cseq);
      if (i >= 0) return this.inbox.splice(i, 1)[0] as SipResponse;
      if (Date.now() > deadline) throw new Error(`no response to ${cseq} in ${ms} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
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
  /** NOTIFY in the dialog the INVITE made (we are its UAS: From/To swapped). */
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
}

let stack: SipStack | undefined;
let peer: Peer | undefined;
afterEach(async () => {
  peer?.sock.close();
  await stack?.stop();
  stack = undefined;
  peer = undefined;
});

async function answered() {
  stack = createSipStack({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: false,
    timers: { T1: 20, T2: 160, T4: 200 },
  });
  await stack.start();
  peer = await Peer.create();
  const snapshots: DialogSnapshot[] = [];
  const leg = stack.invite({
    target: { host: '127.0.0.1', port: peer.port, transport: 'udp' },
    requestUri: `sip:bob@127.0.0.1:${peer.port}`,
    from: { uri: 'sip:gw@127.0.0.1' },
    to: { uri: 'sip:bob@127.0.0.1' },
    sdp: SDP,
    onDialog: (d) => snapshots.push(d),
  });
  const invite = await peer.next('INVITE');
  const up = new Promise<CallLegEvents['answered']>((r) => leg.once('answered', r));
  peer.reply(invite, 200, 'OK', 'far', [], SDP);
  await up;
  await peer.next('ACK');
  return { peer, leg, invite, snapshots };
}

describe('RFC 3515 REFER from our leg', () => {
  it('REFER in the dialog (CSeq + 1, Refer-To, Referred-By, Contact, snapshot first); 202; NOTIFY 100 then 200 → transferred, each NOTIFY answered 200', async () => {
    const { peer, leg, invite, snapshots } = await answered();
    const progress: ReferProgress[] = [];
    const before = snapshots.length;
    const outcome = leg.refer(
      { referTo: 'sip:+14155550123@carrier.example', referredBy: '<sip:+12125550100@gateway>' },
      (p) => progress.push(p),
    );
    expect(snapshots.length).toBe(before + 1);
    expect(snapshots.at(-1)?.localSeq).toBe(2);
    const refer = await peer.next('REFER');
    expect(getHeader(refer, 'cseq')).toBe('2 REFER');
    expect(getHeader(refer, 'refer-to')).toBe('<sip:+14155550123@carrier.example>');
    expect(getHeader(refer, 'referred-by')).toBe('<sip:+12125550100@gateway>');
    expect(getHeader(refer, 'contact')).toBeDefined();
    expect(getHeader(refer, 'to')).toContain('tag=far');
    expect(refer.uri).toBe(`sip:peer@127.0.0.1:${peer.port}`);
    peer.reply(refer, 202, 'Accepted', undefined);
    const n1 = peer.notify(invite, 'far', 'active;expires=60', 'SIP/2.0 100 Trying\r\n');
    expect((await peer.response(n1)).status).toBe(200);
    const n2 = peer.notify(
      invite,
      'far',
      'terminated;reason=noresource',
      'SIP/2.0 200 OK\r\n',
      'refer;id=2',
    );
    expect((await peer.response(n2)).status).toBe(200);
    expect(await outcome).toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
    expect(progress).toEqual([{ status: 100, reason: 'Trying' }]);
    expect(leg.state).toBe('confirmed'); // no BYE of its own
    const bye = leg.bye();
    peer.reply(await peer.next('BYE'), 200, 'OK');
    await bye;
  });

  it('405 → refused 405, the call stays up; a second REFER while one is pending rejects', async () => {
    const { peer, leg } = await answered();
    const outcome = leg.refer({ referTo: 'sip:agent@pbx.example' });
    await expect(leg.refer({ referTo: 'sip:x@y' })).rejects.toThrow(/already pending/);
    const refer = await peer.next('REFER');
    peer.reply(refer, 405, 'Method Not Allowed', undefined, [['allow', 'INVITE, ACK, BYE']]);
    expect(await outcome).toEqual({ kind: 'refused', status: 405, reason: 'Method Not Allowed' });
    expect(leg.state).toBe('confirmed');
  });

  it('sipfrag 486 → failed; a NOTIFY naming another REFER id is not taken', async () => {
    const { peer, leg, invite } = await answered();
    const outcome = leg.refer({ referTo: 'sip:+14155550123@carrier.example' });
    peer.reply(await peer.next('REFER'), 202, 'Accepted');
    const stale = peer.notify(invite, 'far', 'terminated', 'SIP/2.0 200 OK\r\n', 'refer;id=99');
    expect((await peer.response(stale)).status).toBe(200);
    const n = peer.notify(invite, 'far', 'terminated;reason=noresource', 'SIP/2.0 486 Busy Here');
    expect((await peer.response(n)).status).toBe(200);
    expect(await outcome).toEqual({ kind: 'failed', status: 486, reason: 'Busy Here' });
  });

  it('accepted but no final NOTIFY → no_notify after timeoutMs; unanswered REFER → refused 0 timeout', async () => {
    const { peer, leg } = await answered();
    const outcome = leg.refer({ referTo: 'sip:a@b' }, undefined, 200);
    peer.reply(await peer.next('REFER'), 202, 'Accepted');
    expect(await outcome).toEqual({ kind: 'no_notify', status: 0, reason: 'timeout' });
    const silent = leg.refer({ referTo: 'sip:a@b' }, undefined, 200);
    await peer.next('REFER');
    expect(await silent).toEqual({ kind: 'refused', status: 0, reason: 'timeout' }); // Timer F
  });

  it('refused 481 on a leg not confirmed; header injection rejects', async () => {
    const { leg, peer } = await answered();
    await expect(leg.refer({ referTo: 'sip:a@b\r\nX: y' })).rejects.toThrow();
    const bye = leg.bye();
    peer.reply(await peer.next('BYE'), 200, 'OK');
    await bye;
    expect(await leg.refer({ referTo: 'sip:a@b' })).toMatchObject({ kind: 'refused', status: 481 });
  });
});
