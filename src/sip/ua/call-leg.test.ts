// Call-leg behaviour against a scripted UDP peer on loopback (short timers):
// held CANCEL, forking, Timer B, transport errors, session timers, 481.

import { describe, expect, it } from 'vitest';
import { getHeader } from '../message/index.js';
import type { CallLegEvents } from './call-leg-types.js';
import { peerTestbed, SDP } from './test-support/udp-peer.js';

const bed = peerTestbed();

async function setup(T1 = 20) {
  return bed.invite({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: { host: '127.0.0.1', port: 0 },
    timers: { T1, T2: T1 * 8, T4: T1 * 10 },
  });
}

function waitFor<K extends keyof CallLegEvents>(
  leg: { once(e: K, l: (d: CallLegEvents[K]) => void): unknown },
  e: K,
): Promise<CallLegEvents[K]> {
  return new Promise((r) => leg.once(e, r));
}

describe('CallLeg', () => {
  it('holds a CANCEL until a provisional arrives (RFC 3261 §9.1)', async () => {
    const { peer, leg } = await setup();
    const invite = await peer.next('INVITE');
    leg.cancel();
    await new Promise((r) => setTimeout(r, 100));
    expect(peer.has('CANCEL')).toBe(false);
    peer.reply(invite, 180, 'Ringing', 'p1');
    const cancel = await peer.next('CANCEL');
    expect(getHeader(cancel, 'cseq')).toBe('1 CANCEL');
    expect(getHeader(cancel, 'via')).toBe(getHeader(invite, 'via'));
    const failed = waitFor(leg, 'failed');
    peer.reply(cancel, 200, 'OK', 'p1');
    peer.reply(invite, 487, 'Request Terminated', 'p1');
    expect(await failed).toMatchObject({ status: 487, cause: 'cancelled' });
    await peer.next('ACK');
  });

  it('forking: first 2xx wins, the other is ACKed and BYEd', async () => {
    const { peer, leg } = await setup();
    const invite = await peer.next('INVITE');
    const answered: unknown[] = [];
    leg.on('answered', (a) => answered.push(a));
    peer.reply(invite, 200, 'OK', 'fork-a', [], SDP);
    peer.reply(invite, 200, 'OK', 'fork-b', [], SDP);
    const ack1 = await peer.next('ACK');
    const ack2 = await peer.next('ACK');
    const bye = await peer.next('BYE');
    expect([getHeader(ack1, 'to'), getHeader(ack2, 'to')].join()).toMatch(/fork-a.*fork-b/);
    expect(getHeader(bye, 'to')).toContain('tag=fork-b');
    expect(answered).toHaveLength(1);
    expect(leg.state).toBe('confirmed');
  });

  it('Timer B: no response → failed 408, cause timeout', async () => {
    const { leg, peer } = await setup(10);
    const failed = await waitFor(leg, 'failed');
    expect(failed).toMatchObject({ status: 408, cause: 'timeout' });
    expect(peer.inbox.length).toBeGreaterThan(3); // Timer A retransmissions
  });

  it('transport error: failed 503, cause transport', async () => {
    const stack = await bed.start({ udp: false, tcp: { host: '127.0.0.1', port: 0 } });
    const leg = stack.invite({
      target: { host: '127.0.0.1', port: 1, transport: 'tcp' },
      requestUri: 'sip:bob@127.0.0.1:1;transport=tcp',
      from: { uri: 'sip:gw@127.0.0.1' },
      to: { uri: 'sip:bob@127.0.0.1' },
      sdp: SDP,
    });
    expect(await waitFor(leg, 'failed')).toMatchObject({ status: 503, cause: 'transport' });
  });

  it('RFC 4028: the peer refreshes (refresher=uas) and stops → BYE on expiry', async () => {
    const { peer, leg } = await setup();
    const invite = await peer.next('INVITE');
    peer.reply(
      invite,
      200,
      'OK',
      'st',
      [
        ['session-expires', '2;refresher=uas'],
        ['require', 'timer'],
      ],
      SDP,
    );
    await waitFor(leg, 'answered');
    const ended = waitFor(leg, 'ended');
    const bye = await peer.next('BYE', 3000); // at 2 - 2/3 s
    peer.reply(bye, 200, 'OK');
    expect(await ended).toMatchObject({ by: 'local', detail: 'session_expired' });
  });

  it('RFC 4028: we are the refresher → re-INVITE at half the interval', async () => {
    const { peer, leg } = await setup();
    const invite = await peer.next('INVITE');
    peer.reply(invite, 200, 'OK', 'st2', [['session-expires', '2;refresher=uac']], SDP);
    await waitFor(leg, 'answered');
    const reinvite = await peer.next('INVITE', 3000);
    expect(getHeader(reinvite, 'session-expires')).toBe('2;refresher=uac');
    expect(getHeader(reinvite, 'cseq')).toBe('2 INVITE');
    peer.reply(reinvite, 200, 'OK', undefined, [['session-expires', '2;refresher=uac']], SDP);
    await peer.next('ACK');
  });

  it('a request for an unknown dialog gets 481', async () => {
    const { peer, stack } = await setup();
    await peer.next('INVITE');
    const bye =
      `BYE sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKu1\r\nMax-Forwards: 70\r\n` +
      `From: <sip:bob@x>;tag=zz\r\nTo: <sip:gw@x>;tag=nobody\r\nCall-ID: unknown\r\nCSeq: 5 BYE\r\nContent-Length: 0\r\n\r\n`;
    peer.sock.send(Buffer.from(bye), stack.localAddress('udp').port, '127.0.0.1');
    for (let i = 0; i < 100 && !peer.inbox.some((m) => m.kind === 'response'); i++)
      await new Promise((r) => setTimeout(r, 10));
    const res = peer.inbox.find((m) => m.kind === 'response');
    expect(res && res.kind === 'response' && res.status).toBe(481);
  });
});
