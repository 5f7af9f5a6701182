// RFC 4028 on the drachtio engine (in-memory drachtio-srf): the INVITE asks
// for session timers, drachtio-server's own teardown of an unrefreshed
// session is reported as session_expired (not as the far end's BYE), and the
// in-dialog probe. drachtio-server itself refreshes and expires sessions; no
// drachtio-server runs here, so its side is as read in its source.
import { describe, expect, it } from 'vitest';
import { connected, dial, flush, record, REMOTE, srfResponse } from './fake-srf.js';

describe('drachtio engine: session timers and the probe', () => {
  it('createUAC carries Session-Expires, Min-SE and Supported: timer from the config', async () => {
    const { srf, sig } = await connected({
      sessionTimer: { expiresSeconds: 1800, minSeconds: 120 },
    });
    sig.invite(dial());
    expect(srf.last().opts.headers).toMatchObject({
      'Session-Expires': '1800',
      'Min-SE': '120',
      Supported: 'timer',
    });
  });

  it('without the config (or 0) nothing is asked for', async () => {
    const { srf, sig } = await connected({ sessionTimer: { expiresSeconds: 0, minSeconds: 90 } });
    sig.invite(dial());
    expect(srf.last().opts.headers['Session-Expires']).toBeUndefined();
  });

  it('drachtio-server ending an unrefreshed session → ended local session_expired; a far-end BYE stays remote', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    const uac = srf.last();
    uac.sent();
    const dialog = uac.answer(REMOTE);
    await flush();
    dialog.serverBye();
    expect(seen.at(-1)).toEqual(['ended', { by: 'local', detail: 'session_expired' }]);

    const other = sig.invite(dial());
    const seen2 = record(other);
    srf.last().sent();
    const d2 = srf.last().answer(REMOTE);
    await flush();
    d2.remoteBye(['Reason: Q.850;cause=16']);
    expect(seen2.at(-1)).toEqual(['ended', { by: 'remote', reason: { q850: 16 } }]);
  });

  it('probe(): OPTIONS in the dialog; a 408 drachtio-server made up (no To tag) is "nothing came back"', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    srf.last().sent();
    const dialog = srf.last().answer(REMOTE);
    await flush();
    expect(await leg.probe()).toBe(200);
    expect(dialog.requests).toEqual([{ method: 'OPTIONS' }]);
    dialog.requestResult = () => Promise.resolve(srfResponse(408, 'Request Timeout', [], '', null));
    expect(await leg.probe()).toBe(0);
    dialog.requestResult = () => Promise.resolve(srfResponse(481, 'Call Does Not Exist'));
    expect(await leg.probe()).toBe(481);
    dialog.requestResult = () => Promise.reject(new Error('socket closed'));
    expect(await leg.probe()).toBe(0);
  });
});
