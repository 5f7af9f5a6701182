// Blind transfer by REFER (RFC 3515) on the drachtio engine (in-memory
// drachtio-srf): REFER through dialog.request, the NOTIFYs drachtio-srf
// emits as 'notify' answered 200 and followed to an outcome.
import { describe, expect, it } from 'vitest';
import type { ReferProgress } from '../dialog/refer-subscription.js';
import { connected, dial, flush, REMOTE, srfRequest, srfResponse } from './fake-srf.js';

async function answered() {
  const { srf, sig, clock } = await connected();
  const leg = sig.invite(dial());
  srf.last().sent();
  const dialog = srf.last().answer(REMOTE);
  await flush();
  return { leg, dialog, clock };
}

const notify = (state: string, frag: string, event = 'refer') =>
  srfRequest(
    'NOTIFY',
    [
      `Event: ${event}`,
      `Subscription-State: ${state}`,
      'Content-Type: message/sipfrag;version=2.0',
    ],
    frag,
  );

describe('drachtio engine: refer()', () => {
  it('REFER with Refer-To and Referred-By; 202; NOTIFY 100 then 200 → transferred, each answered 200', async () => {
    const { leg, dialog } = await answered();
    dialog.requestResult = () => Promise.resolve(srfResponse(202, 'Accepted'));
    const progress: ReferProgress[] = [];
    const outcome = leg.refer!(
      { referTo: 'sip:+14155550123@carrier.example', referredBy: '<sip:+12125550100@gateway>' },
      (p) => progress.push(p),
    );
    expect(dialog.requests).toEqual([
      {
        method: 'REFER',
        headers: {
          'Refer-To': '<sip:+14155550123@carrier.example>',
          'Referred-By': '<sip:+12125550100@gateway>',
        },
      },
    ]);
    await flush();
    const r1 = dialog.incoming('notify', notify('active;expires=60', 'SIP/2.0 100 Trying\r\n'));
    const r2 = dialog.incoming(
      'notify',
      notify('terminated;reason=noresource', 'SIP/2.0 200 OK\r\n'),
    );
    expect(r1.sent[0]?.status).toBe(200);
    expect(r2.sent[0]?.status).toBe(200);
    expect(await outcome).toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
    expect(progress).toEqual([{ status: 100, reason: 'Trying' }]);
    expect(dialog.destroyed).toEqual([]); // no BYE of its own
  });

  it('405 → refused; a 408 drachtio-server made up → refused 0 timeout; one REFER at a time', async () => {
    const { leg, dialog } = await answered();
    dialog.requestResult = () => Promise.resolve(srfResponse(405, 'Method Not Allowed'));
    const first = leg.refer!({ referTo: 'sip:a@b' });
    await expect(leg.refer!({ referTo: 'sip:c@d' })).rejects.toThrow(/already pending/);
    expect(await first).toEqual({ kind: 'refused', status: 405, reason: 'Method Not Allowed' });
    dialog.requestResult = () => Promise.resolve(srfResponse(408, 'Request Timeout', [], '', null));
    expect(await leg.refer!({ referTo: 'sip:a@b' })).toEqual({
      kind: 'refused',
      status: 0,
      reason: 'timeout',
    });
    dialog.requestResult = () => Promise.reject(new Error('socket closed'));
    expect(await leg.refer!({ referTo: 'sip:a@b' })).toMatchObject({ kind: 'refused', status: 0 });
  });

  it('sipfrag 486 → failed; other NOTIFYs answered 200 and ignored; silence → no_notify', async () => {
    const { leg, dialog, clock } = await answered();
    dialog.requestResult = () => Promise.resolve(srfResponse(202, 'Accepted'));
    const busy = leg.refer!({ referTo: 'sip:a@b' });
    await flush();
    const other = dialog.incoming('notify', notify('active', 'SIP/2.0 200 OK', 'dialog'));
    expect(other.sent[0]?.status).toBe(200);
    dialog.incoming('notify', notify('terminated', 'SIP/2.0 486 Busy Here'));
    expect(await busy).toEqual({ kind: 'failed', status: 486, reason: 'Busy Here' });
    const silent = leg.refer!({ referTo: 'sip:a@b' }, undefined, 5000);
    await flush();
    clock.advance(5000);
    expect(await silent).toEqual({ kind: 'no_notify', status: 0, reason: 'timeout' });
  });

  it('the far end’s BYE after the 202 → no_notify dialog_ended; after the end → refused 481', async () => {
    const { leg, dialog } = await answered();
    dialog.requestResult = () => Promise.resolve(srfResponse(202, 'Accepted'));
    const outcome = leg.refer!({ referTo: 'sip:a@b' });
    await flush();
    dialog.remoteBye();
    expect(await outcome).toEqual({ kind: 'no_notify', status: 0, reason: 'dialog_ended' });
    expect(await leg.refer!({ referTo: 'sip:a@b' })).toMatchObject({
      kind: 'refused',
      status: 481,
    });
  });
});
