// RFC 3515 blind transfer on an outgoing call leg against a scripted UDP peer
// on loopback (short T1): the REFER as sent, the NOTIFYs of its implicit
// subscription answered 200 and followed to an outcome, one REFER at a time.

import { describe, expect, it } from 'vitest';
import { getHeader } from '../message/index.js';
import type { CallLegEvents, DialogSnapshot, ReferProgress } from './call-leg-types.js';
import { peerTestbed, SDP } from './test-support/udp-peer.js';

const bed = peerTestbed();

async function answered() {
  const snapshots: DialogSnapshot[] = [];
  const { peer, leg } = await bed.invite(
    { udp: { host: '127.0.0.1', port: 0 }, tcp: false, timers: { T1: 20, T2: 160, T4: 200 } },
    { onDialog: (d) => snapshots.push(d) },
  );
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
