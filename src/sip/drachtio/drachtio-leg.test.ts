// Call legs on the drachtio engine against an in-memory drachtio-srf: the
// SignalingPort's events from scripted createUAC outcomes and dialog requests.
import { describe, expect, it } from 'vitest';
import {
  connected,
  dial,
  flush,
  record,
  REMOTE,
  SDP,
  sipError,
  srfRequest,
  srfResponse,
} from './fake-srf.js';

describe('DrachtioSignaling call legs', () => {
  it('180 then 200: provisional, then answered with the remote SDP; far-end BYE → ended remote', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial({ credentials: { username: 'alice', password: 'secret' } }));
    const seen = record(leg);
    const uac = srf.last();
    expect(uac.opts.auth).toEqual({ username: 'alice', password: 'secret' });
    expect(uac.opts.headers['From']).toBe('<sip:+15550100@127.0.0.1>');
    expect(leg.callId).toBe(uac.opts.headers['Call-ID']);
    uac.sent();
    uac.provisional(180, 'Ringing');
    const dialog = uac.answer(REMOTE);
    await flush();
    expect(leg.state).toBe('confirmed');
    expect(sig.liveLegs).toBe(1);
    dialog.remoteBye(['Reason: Q.850;cause=16']);
    expect(seen).toEqual([
      ['provisional', { status: 180, reason: 'Ringing' }],
      ['answered', { sdp: REMOTE, headers: [] }],
      ['ended', { by: 'remote', reason: { q850: 16 } }],
    ]);
    expect(sig.liveLegs).toBe(0);
  });

  it("the 200's header fields come with `answered` (the far end's X- headers)", async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    srf.last().sent();
    srf.last().answer(REMOTE, { 'X-Carrier-Ref': 'CR-1', Server: 'far' });
    await flush();
    expect(seen).toEqual([
      [
        'answered',
        {
          sdp: REMOTE,
          headers: [
            ['X-Carrier-Ref', 'CR-1'],
            ['Server', 'far'],
          ],
        },
      ],
    ]);
  });

  it('183 with early SDP', async () => {
    const { srf, sig } = await connected();
    const seen = record(sig.invite(dial()));
    srf.last().sent();
    srf.last().provisional(183, 'Session Progress', REMOTE);
    expect(seen).toEqual([
      ['provisional', { status: 183, reason: 'Session Progress', sdp: REMOTE }],
    ]);
  });

  it.each([
    [486, 'Busy Here', ['Reason: Q.850;cause=17'], { q850: 17 }],
    [
      403,
      'Forbidden',
      ['Warning: 399 sbc "barred"'],
      { warning: '399 sbc "barred"', warningCode: 399 },
    ],
    [404, 'Not Found', [], {}],
    [503, 'Service Unavailable', ['Retry-After: 60'], { retryAfter: 60 }],
    [603, 'Decline', ['Reason: Q.850;cause=21'], { q850: 21 }],
  ])(
    '%i %s → failed (cause response) with the headers read out',
    async (status, phrase, headers, extra) => {
      const { srf, sig } = await connected();
      const leg = sig.invite(dial());
      const seen = record(leg);
      srf.last().sent();
      srf.last().reject(sipError(srfResponse(status, phrase, headers)));
      await flush();
      expect(seen).toEqual([
        [
          'failed',
          expect.objectContaining({ status, reason: phrase, cause: 'response', ...extra }),
        ],
      ]);
      expect(leg.state).toBe('terminated');
      expect(sig.liveLegs).toBe(0);
    },
  );

  it('Timer B: a 408 drachtio-server made up → cause timeout', async () => {
    const { srf, sig } = await connected();
    const seen = record(sig.invite(dial()));
    srf.last().reject(sipError(srfResponse(408, 'Request Timeout', [], '', null)));
    await flush();
    expect(seen).toEqual([
      ['failed', { status: 408, reason: 'Request Timeout', cause: 'timeout' }],
    ]);
  });

  it('cancel before the INVITE went out: CANCEL waits for cbRequest, then 487 → cancelled', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    leg.cancel();
    expect(srf.last().cancels).toBe(0);
    srf.last().sent();
    expect(srf.last().cancels).toBe(1);
    srf.last().reject(sipError(srfResponse(487, 'Request Terminated')));
    await flush();
    expect(seen).toEqual([
      ['failed', { status: 487, reason: 'Request Terminated', cause: 'cancelled' }],
    ]);
  });

  it('cancel after 180: one CANCEL (cancel twice is harmless), 487 → cancelled', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    srf.last().sent();
    srf.last().provisional(180, 'Ringing');
    leg.cancel();
    leg.cancel();
    expect(srf.last().cancels).toBe(1);
    srf.last().reject(sipError(srfResponse(487, 'Request Terminated')));
    await flush();
    expect(seen.map(([e]) => e)).toEqual(['provisional', 'failed']);
    expect(seen[1]).toEqual([
      'failed',
      { status: 487, reason: 'Request Terminated', cause: 'cancelled' },
    ]);
  });

  it('a 200 crossing our CANCEL: BYE at once, failed cancelled, never answered', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    srf.last().sent();
    leg.cancel();
    const dialog = srf.last().answer(REMOTE);
    await flush();
    expect(dialog.destroyed).toEqual([{}]);
    expect(seen).toEqual([['failed', { status: 200, reason: 'OK', cause: 'cancelled' }]]);
  });

  it('no final response 64*T1 after our CANCEL → failed 408 cancelled (RFC 3261 §9.1)', async () => {
    const { srf, sig, clock } = await connected({ cancelGuardMs: 32_000 });
    const leg = sig.invite(dial());
    const seen = record(leg);
    srf.last().sent();
    leg.cancel();
    clock.advance(31_999);
    expect(seen).toEqual([]);
    clock.advance(1);
    expect(seen).toEqual([
      ['failed', { status: 408, reason: 'Request Timeout', cause: 'cancelled' }],
    ]);
    srf.last().reject(sipError(srfResponse(487, 'Request Terminated')));
    await flush();
    expect(seen).toHaveLength(1);
  });

  it('local BYE with a Reason header (RFC 3326) → ended local; a crossing remote BYE is not reported twice', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    const dialog = srf.last().answer(REMOTE);
    await flush();
    const done = leg.bye({ q850: 16, text: 'call_maximum_time_reached' });
    dialog.remoteBye();
    await done;
    expect(dialog.destroyed).toEqual([
      { Reason: 'Q.850;cause=16;text="call_maximum_time_reached"' },
    ]);
    expect(seen.slice(1)).toEqual([
      ['ended', { by: 'local', reason: { q850: 16, text: 'call_maximum_time_reached' } }],
    ]);
    await leg.bye();
    expect(dialog.destroyed).toHaveLength(1);
  });

  it('a BYE that fails on the wire still ends the leg locally', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    const dialog = srf.last().answer(REMOTE);
    dialog.byeResult = () => Promise.reject(new Error('socket closed'));
    await flush();
    await leg.bye();
    expect(seen.at(-1)).toEqual(['ended', { by: 'local', reason: undefined }]);
  });

  it('bye() before the answer cancels', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    srf.last().sent();
    await leg.bye();
    expect(srf.last().cancels).toBe(1);
  });

  it('re-INVITE (hold) → reinvite event, answered with the answerOffer SDP', async () => {
    const { srf, sig } = await connected();
    const answered = SDP.replace('a=sendrecv', 'a=recvonly');
    const offers: unknown[] = [];
    const leg = sig.invite(
      dial({
        answerOffer: (o) => {
          offers.push(o);
          return answered;
        },
      }),
    );
    const seen = record(leg);
    const dialog = srf.last().answer(REMOTE);
    await flush();
    const hold = REMOTE.replace('a=sendrecv', 'a=sendonly');
    const reply = dialog.incoming(
      'modify',
      srfRequest('INVITE', ['Content-Type: application/sdp'], hold),
    );
    expect(seen.at(-1)).toEqual(['reinvite', { sdp: hold, hold: true, method: 'INVITE' }]);
    expect(offers).toEqual([{ sdp: hold, hold: true, method: 'INVITE' }]);
    expect(reply.sent).toEqual([
      {
        status: 200,
        body: answered,
        headers: { 'Content-Type': 'application/sdp', Contact: '<sip:127.0.0.1:5060>' },
      },
    ]);
    expect(dialog.local.sdp).toBe(answered);
  });

  it('re-INVITE without answerOffer: our SDP mirrored; offerless re-INVITE: our SDP (§14.2); UPDATE too', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    const dialog = srf.last().answer(REMOTE);
    await flush();
    const hold = REMOTE.replace('a=sendrecv', 'a=sendonly');
    const r1 = dialog.incoming(
      'update',
      srfRequest('UPDATE', ['Content-Type: application/sdp'], hold),
    );
    expect(r1.sent[0]?.body).toContain('a=recvonly');
    expect(seen.at(-1)).toEqual(['reinvite', { sdp: hold, hold: true, method: 'UPDATE' }]);
    const r2 = dialog.incoming('modify', srfRequest('INVITE'));
    expect(r2.sent[0]?.status).toBe(200);
    expect(r2.sent[0]?.body).toBe(r1.sent[0]?.body);
  });

  it('INFO application/dtmf-relay → dtmf, answered 200', async () => {
    const { srf, sig } = await connected();
    const leg = sig.invite(dial());
    const seen = record(leg);
    const dialog = srf.last().answer(REMOTE);
    await flush();
    const reply = dialog.incoming(
      'info',
      srfRequest('INFO', ['Content-Type: application/dtmf-relay'], 'Signal=7\r\nDuration=120\r\n'),
    );
    expect(reply.sent).toEqual([{ status: 200 }]);
    expect(seen.at(-1)).toEqual(['dtmf', { digit: '7', durationMs: 120 }]);
  });

  it('CR/LF in a header throws at invite(), like the embedded stack', async () => {
    const { sig } = await connected();
    expect(() => sig.invite(dial({ headers: [['X-A', 'a\r\nb']] }))).toThrow();
  });
});
