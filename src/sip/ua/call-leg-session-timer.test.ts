// RFC 4028 on an outgoing call leg against a scripted UDP peer on loopback
// (short intervals, short T1): what the INVITE asks for, the 422 retry, the
// refresh (UPDATE or re-INVITE) and how its failures end the call, the
// in-dialog probe, and the dialog snapshot a BYE after a crash is built from.

import { describe, expect, it } from 'vitest';
import { getHeader, getHeaders } from '../message/index.js';
import type { SipRequest } from '../message/types.js';
import type { CallLegEvents, DialogSnapshot, InviteOptions } from './call-leg-types.js';
import type { SipStackConfig } from './config.js';
import { createSipStack } from './sip-stack.js';
import { peerTestbed, SDP, type UdpPeer } from './test-support/udp-peer.js';

const bed = peerTestbed();

async function setup(config: Partial<SipStackConfig> = {}, extra: Partial<InviteOptions> = {}) {
  const snapshots: DialogSnapshot[] = [];
  const { stack, peer, leg } = await bed.invite(
    {
      udp: { host: '127.0.0.1', port: 0 },
      tcp: false,
      timers: { T1: 20, T2: 160, T4: 200 },
      ...config,
    },
    { onDialog: (d) => snapshots.push(d), ...extra },
  );
  return { stack, peer, leg, snapshots };
}

function waitFor<K extends keyof CallLegEvents>(
  leg: { once(e: K, l: (d: CallLegEvents[K]) => void): unknown },
  e: K,
): Promise<CallLegEvents[K]> {
  return new Promise((r) => leg.once(e, r));
}

/** Answers the INVITE with Session-Expires (and Allow) as given. */
async function answer(
  p: UdpPeer,
  leg: Parameters<typeof waitFor>[0],
  headers: Array<[string, string]>,
): Promise<SipRequest> {
  const invite = await p.next('INVITE');
  const answered = waitFor(leg as never, 'answered');
  p.reply(invite, 200, 'OK', 'far', [['require', 'timer'], ...headers], SDP);
  await answered;
  await p.next('ACK');
  return invite;
}

describe('RFC 4028 §7.1: the INVITE asks for session timers', () => {
  it('Session-Expires and Min-SE from the stack config, with Supported: timer', async () => {
    const { peer } = await setup({ sessionTimer: { expiresSeconds: 1800, minSeconds: 120 } });
    const invite = await peer.next('INVITE');
    expect(getHeader(invite, 'session-expires')).toBe('1800');
    expect(getHeader(invite, 'min-se')).toBe('120');
    expect(getHeaders(invite, 'supported').join(',')).toMatch(/\btimer\b/);
  });

  it('expiresSeconds 0 asks for none (Supported: timer still sent)', async () => {
    const { peer } = await setup({ sessionTimer: { expiresSeconds: 0 } });
    const invite = await peer.next('INVITE');
    expect(getHeader(invite, 'session-expires')).toBeUndefined();
    expect(getHeader(invite, 'min-se')).toBeUndefined();
    expect(getHeaders(invite, 'supported').join(',')).toMatch(/\btimer\b/);
  });

  it('422 → the INVITE again with CSeq + 1, same Call-ID and From tag, interval and Min-SE raised to the far end’s Min-SE', async () => {
    const { peer, leg } = await setup({ sessionTimer: { expiresSeconds: 1800, minSeconds: 90 } });
    const first = await peer.next('INVITE');
    peer.reply(first, 422, 'Session Interval Too Small', 'x', [['min-se', '3600']]);
    await peer.next('ACK');
    const second = await peer.next('INVITE');
    expect(getHeader(second, 'cseq')).toBe('2 INVITE');
    expect(getHeader(second, 'call-id')).toBe(getHeader(first, 'call-id'));
    expect(getHeader(second, 'from')).toBe(getHeader(first, 'from'));
    expect(getHeader(second, 'session-expires')).toBe('3600');
    expect(getHeader(second, 'min-se')).toBe('3600');
    const answered = waitFor(leg, 'answered');
    peer.reply(second, 200, 'OK', 'far', [['session-expires', '3600;refresher=uac']], SDP);
    await answered;
    expect(leg.sessionTimer.seconds).toBe(3600);
    expect(leg.sessionTimer.refresher).toBe(true);
  });

  it('a 422 that asks for no more than we offered fails the leg with 422', async () => {
    const { peer, leg } = await setup({ sessionTimer: { expiresSeconds: 1800, minSeconds: 90 } });
    const failed = waitFor(leg, 'failed');
    const invite = await peer.next('INVITE');
    peer.reply(invite, 422, 'Session Interval Too Small', 'x', [['min-se', '900']]);
    expect(await failed).toMatchObject({ status: 422, cause: 'response' });
  });
});

describe('RFC 4028 §7.2: the 2xx decides', () => {
  it('no Session-Expires in the 2xx → no session timer', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, []);
    expect(leg.sessionTimer.active).toBe(false);
  });

  it('refresher=uac and UPDATE allowed → UPDATE refreshes (no SDP) at half the interval, Min-SE kept', async () => {
    const { peer, leg } = await setup({ sessionTimer: { expiresSeconds: 1800, minSeconds: 90 } });
    await answer(peer, leg, [
      ['session-expires', '2;refresher=uac'],
      ['allow', 'INVITE, ACK, BYE, UPDATE'],
    ]);
    const started = Date.now();
    const update = await peer.next('UPDATE', 3000);
    expect(Date.now() - started).toBeGreaterThan(700);
    expect(getHeader(update, 'session-expires')).toBe('2;refresher=uac');
    expect(getHeader(update, 'min-se')).toBe('90');
    expect(update.body.length).toBe(0);
    peer.reply(update, 200, 'OK', undefined, [['session-expires', '2;refresher=uac']]);
    // refreshed: the next one comes a half interval later, and the call lives on
    const again = await peer.next('UPDATE', 3000);
    peer.reply(again, 200, 'OK', undefined, [['session-expires', '2;refresher=uac']]);
    expect(leg.state).toBe('confirmed');
  });

  it('refresher=uac without UPDATE in Allow → re-INVITE with our SDP unchanged, ACKed', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, [['session-expires', '2;refresher=uac']]);
    const reinvite = await peer.next('INVITE', 3000);
    expect(reinvite.body.toString()).toBe(SDP);
    expect(getHeader(reinvite, 'cseq')).toBe('2 INVITE');
    peer.reply(reinvite, 200, 'OK', undefined, [['session-expires', '2;refresher=uac']], SDP);
    await peer.next('ACK');
  });
});

describe('RFC 4028 §10: a failed refresh or a missing one ends the call with BYE', () => {
  it('our refresh gets no answer → BYE (Reason Q.850 102), ended at once with session_refresh_no_answer', async () => {
    const { peer, leg } = await setup();
    // 4 s: the refresh at 2 s times out (Timer B, 64 × 20 ms) before the interval ends
    await answer(peer, leg, [['session-expires', '4;refresher=uac']]);
    await peer.next('INVITE', 3000); // the refresh, never answered
    const ended = await waitFor(leg, 'ended');
    expect(ended).toMatchObject({ by: 'local', detail: 'session_refresh_no_answer' });
    const bye = await peer.next('BYE', 3000);
    expect(getHeader(bye, 'reason')).toMatch(/^Q\.850;cause=102/);
  });

  it('our refresh gets 481 → BYE, session_refresh_481', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, [['session-expires', '2;refresher=uac']]);
    const refresh = await peer.next('INVITE', 3000);
    const ended = waitFor(leg, 'ended');
    peer.reply(refresh, 481, 'Call/Transaction Does Not Exist');
    expect(await ended).toMatchObject({ by: 'local', detail: 'session_refresh_481' });
    await peer.next('BYE', 3000);
  });

  it('a 500 with Retry-After is retried before the session expires', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, [['session-expires', '4;refresher=uac']]);
    const first = await peer.next('INVITE', 4000);
    peer.reply(first, 500, 'Server Internal Error', undefined, [['retry-after', '1']]);
    const second = await peer.next('INVITE', 3000);
    expect(Number(getHeader(second, 'cseq')!.split(' ')[0])).toBeGreaterThan(
      Number(getHeader(first, 'cseq')!.split(' ')[0]),
    );
    peer.reply(second, 200, 'OK', undefined, [['session-expires', '4;refresher=uac']], SDP);
    await peer.next('ACK');
    expect(leg.state).toBe('confirmed');
  });

  it('refresher=uas and the far end never refreshes → BYE at interval − interval/3, session_expired', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, [['session-expires', '3;refresher=uas']]);
    const started = Date.now();
    const ended = await waitFor(leg, 'ended');
    const took = Date.now() - started;
    expect(ended).toMatchObject({ by: 'local', detail: 'session_expired' });
    expect(took).toBeGreaterThan(1800);
    expect(took).toBeLessThan(3000);
    await peer.next('BYE', 2000);
  });

  it('refresher=uas and the far end refreshes (re-INVITE) → the session lives past its interval', async () => {
    const { peer, leg, stack } = await setup();
    const invite = await answer(peer, leg, [['session-expires', '2;refresher=uas']]);
    const to = `${getHeader(invite, 'from')}`;
    const from = `<sip:bob@127.0.0.1>;tag=far`;
    const gw = stack.localAddress('udp');
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 800));
      const req =
        `UPDATE sip:gw@127.0.0.1:${gw.port} SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:${peer.port};branch=z9hG4bKr${i}\r\n` +
        `Max-Forwards: 70\r\nFrom: ${from}\r\nTo: ${to}\r\nCall-ID: ${getHeader(invite, 'call-id')}\r\n` +
        `CSeq: ${10 + i} UPDATE\r\nContact: <sip:peer@127.0.0.1:${peer.port}>\r\nSession-Expires: 2;refresher=uac\r\n` +
        `Content-Length: 0\r\n\r\n`;
      peer.sock.send(Buffer.from(req), gw.port, '127.0.0.1');
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(leg.state).toBe('confirmed');
    expect(peer.inbox.some((m) => m.kind === 'request' && m.method === 'BYE')).toBe(false);
    const ok = peer.inbox.filter((m) => m.kind === 'response' && m.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(3);
  });
});

describe('the dialog outside the leg', () => {
  it('probe(): the far end’s status, 0 when nothing answers', async () => {
    const { peer, leg } = await setup();
    await answer(peer, leg, []);
    const asked = leg.probe();
    const options = await peer.next('OPTIONS');
    peer.reply(options, 200, 'OK');
    expect(await asked).toBe(200);
    expect(await leg.probe()).toBe(0); // unanswered: Timer F (64 × 20 ms)
  });

  it('onDialog: a snapshot at the answer and before each request of ours; endDialog() BYEs from it', async () => {
    const { peer, leg, snapshots, stack } = await setup();
    const invite = await peer.next('INVITE');
    const answered = waitFor(leg, 'answered');
    peer.reply(
      invite,
      200,
      'OK',
      'far',
      [['record-route', '<sip:proxy@127.0.0.1:' + peer.port + ';lr>']],
      SDP,
    );
    await answered;
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]).toMatchObject({
      callId: getHeader(invite, 'call-id'),
      localTag: leg.localTag,
      remoteTag: 'far',
      localParty: getHeader(invite, 'from'),
      remoteTarget: `sip:peer@127.0.0.1:${peer.port}`,
      routeSet: [`<sip:proxy@127.0.0.1:${peer.port};lr>`],
      localSeq: 1,
      transport: 'udp',
      destination: { host: '127.0.0.1', port: peer.port },
    });
    expect(snapshots[0]!.remoteParty).toContain('tag=far');
    const info = leg.sendInfo({ contentType: 'application/dtmf-relay', body: 'Signal=1\r\n' });
    expect(snapshots.at(-1)!.localSeq).toBe(2); // kept before the INFO left
    peer.reply(await peer.next('INFO'), 200, 'OK');
    await info;
    // A process that never saw this dialog ends it from the snapshot.
    const other = createSipStack({ udp: { host: '127.0.0.1', port: 0 }, tcp: false });
    await other.start();
    try {
      const ended = other.endDialog(snapshots.at(-1)!, { q850: 41, text: 'gateway restarted' });
      const bye = await peer.next('BYE');
      expect(bye.uri).toBe(`sip:peer@127.0.0.1:${peer.port}`);
      expect(getHeader(bye, 'cseq')).toBe('3 BYE');
      expect(getHeader(bye, 'call-id')).toBe(getHeader(invite, 'call-id'));
      expect(getHeader(bye, 'from')).toBe(getHeader(invite, 'from'));
      expect(getHeader(bye, 'to')).toContain('tag=far');
      expect(getHeader(bye, 'route')).toBe(`<sip:proxy@127.0.0.1:${peer.port};lr>`);
      expect(getHeader(bye, 'reason')).toBe('Q.850;cause=41;text="gateway restarted"');
      peer.reply(bye, 200, 'OK');
      expect(await ended).toBe(200);
    } finally {
      await other.stop();
    }
    void stack;
  });
});
