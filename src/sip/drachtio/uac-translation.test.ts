import { describe, expect, it } from 'vitest';
import type { InviteOptions } from '../ua/call-leg-types.js';
import { sipError, srfRequest, srfResponse } from './fake-srf.js';
import {
  buildUacRequest,
  byeHeaders,
  dtmfFromInfo,
  failureFromError,
  hangupReasonFromBye,
  isSipError,
  nextHop,
  offerFromRequest,
  provisionalFromResponse,
} from './uac-translation.js';

const SDP =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 20000 RTP/AVP 0\r\na=sendrecv\r\n';

const dial = (over: Partial<InviteOptions> = {}): InviteOptions => ({
  target: { host: 'trunk.example', port: 5080, transport: 'udp' },
  requestUri: 'sip:+15550001@trunk.example:5080',
  from: { uri: 'sip:+15550100@trunk.example' },
  to: { uri: 'sip:+15550001@trunk.example:5080' },
  headers: [
    ['P-Asserted-Identity', '<sip:+15550100@trunk.example>'],
    ['X-Campaign', 'c1'],
  ],
  sdp: SDP,
  ...over,
});

describe('buildUacRequest', () => {
  it('puts the caller ID in an explicit From (drachtio-srf has no user part otherwise), To, Call-ID and X- headers', () => {
    const { uri, opts } = buildUacRequest(
      dial({ credentials: { username: 'u', password: 'p' } }),
      'cid-1',
    );
    expect(uri).toBe('sip:+15550001@trunk.example:5080');
    expect(opts).toEqual({
      localSdp: SDP,
      headers: {
        From: '<sip:+15550100@trunk.example>',
        To: '<sip:+15550001@trunk.example:5080>',
        'Call-ID': 'cid-1',
        'P-Asserted-Identity': '<sip:+15550100@trunk.example>',
        'X-Campaign': 'c1',
      },
      auth: { username: 'u', password: 'p' },
    });
  });

  it('quotes a display name and joins repeated headers with a comma (RFC 3261 §7.3.1)', () => {
    const { opts } = buildUacRequest(
      dial({
        from: { uri: 'sip:anonymous@anonymous.invalid', displayName: 'Anonymous' },
        headers: [
          ['Privacy', 'id'],
          ['privacy', 'header'],
        ],
      }),
      'cid-2',
    );
    expect(opts.headers['From']).toBe('"Anonymous" <sip:anonymous@anonymous.invalid>');
    expect(opts.headers['Privacy']).toBe('id, header');
    expect(opts.auth).toBeUndefined();
  });

  it('refuses CR/LF in caller input (header injection)', () => {
    expect(() => buildUacRequest(dial({ headers: [['X-A', 'v\r\nBYE x']] }), 'c')).toThrow();
    expect(() => buildUacRequest(dial({ to: { uri: 'sip:1@h\r\nX: y' } }), 'c')).toThrow();
  });
});

describe('nextHop', () => {
  it('is unset when the Request-URI already names the trunk', () => {
    expect(nextHop(dial())).toBeUndefined();
    expect(
      nextHop(
        dial({
          target: { host: 'trunk.example', transport: 'tcp' },
          requestUri: 'sip:1@trunk.example;transport=tcp',
        }),
      ),
    ).toBeUndefined();
  });

  it('names the trunk as proxy otherwise', () => {
    expect(nextHop(dial({ requestUri: 'sip:1@carrier.example' }))).toBe('sip:trunk.example:5080');
    expect(nextHop(dial({ target: { host: 'trunk.example', port: 5080, transport: 'tcp' } }))).toBe(
      'sip:trunk.example:5080;transport=tcp',
    );
  });
});

describe('provisionalFromResponse', () => {
  it('180 without SDP, 183 with early SDP, nothing for 100 or finals', () => {
    expect(provisionalFromResponse(srfResponse(180, 'Ringing'))).toEqual({
      status: 180,
      reason: 'Ringing',
    });
    expect(
      provisionalFromResponse(
        srfResponse(183, 'Session Progress', ['Content-Type: application/sdp'], SDP),
      ),
    ).toEqual({ status: 183, reason: 'Session Progress', sdp: SDP });
    expect(provisionalFromResponse(srfResponse(100, 'Trying', [], '', null))).toBeUndefined();
    expect(provisionalFromResponse(srfResponse(200, 'OK'))).toBeUndefined();
  });
});

describe('failureFromError', () => {
  it('486 with Reason Q.850 cause 17 (RFC 3326)', () => {
    const err = sipError(
      srfResponse(486, 'Busy Here', ['Reason: Q.850;cause=17;text="User busy"']),
    );
    expect(isSipError(err)).toBe(true);
    expect(failureFromError(err, false)).toEqual({
      status: 486,
      reason: 'Busy Here',
      reasonHeader: 'Q.850;cause=17;text="User busy"',
      q850: 17,
      cause: 'response',
    });
  });

  it('403 with a Warning (RFC 3261 §20.43), code and text read out', () => {
    const err = sipError(
      srfResponse(403, 'Forbidden', ['Warning: 399 sbc.example "Caller ID not allowed"']),
    );
    expect(failureFromError(err, false)).toEqual({
      status: 403,
      reason: 'Forbidden',
      warning: '399 sbc.example "Caller ID not allowed"',
      warningCode: 399,
      warningText: 'Caller ID not allowed',
      cause: 'response',
    });
  });

  it('503 with Retry-After (§20.33) and a Reason header names are case-insensitive', () => {
    const err = sipError(
      srfResponse(503, 'Service Unavailable', ['retry-after: 30', 'REASON: Q.850;cause=34']),
    );
    expect(failureFromError(err, false)).toMatchObject({
      status: 503,
      q850: 34,
      retryAfter: 30,
      cause: 'response',
    });
  });

  it('an unparsable Reason is kept raw without a cause', () => {
    const err = sipError(srfResponse(480, 'Temporarily Unavailable', ['Reason: ;;;']));
    const f = failureFromError(err, false);
    expect(f.reasonHeader).toBe(';;;');
    expect(f.q850).toBeUndefined();
  });

  it('487 after our CANCEL → cancelled; any final after our CANCEL is ours too', () => {
    expect(failureFromError(sipError(srfResponse(487, 'Request Terminated')), true)).toEqual({
      status: 487,
      reason: 'Request Terminated',
      cause: 'cancelled',
    });
    expect(failureFromError(sipError(srfResponse(486, 'Busy Here')), true).cause).toBe('cancelled');
  });

  it('a 487 we did not ask for is a plain response', () => {
    expect(failureFromError(sipError(srfResponse(487, 'Request Terminated')), false).cause).toBe(
      'response',
    );
  });

  it('a 408 made by drachtio-server (no To tag: Timer B) → timeout; one from the far end → response', () => {
    const local = sipError(srfResponse(408, 'Request Timeout', [], '', null));
    expect(failureFromError(local, false)).toEqual({
      status: 408,
      reason: 'Request Timeout',
      cause: 'timeout',
    });
    const remote = sipError(srfResponse(408, 'Request Timeout', ['Reason: Q.850;cause=18']));
    expect(failureFromError(remote, false)).toMatchObject({ cause: 'response', q850: 18 });
  });

  it('no drachtio-server connection or a broken socket → 503 transport', () => {
    expect(failureFromError(new Error('socket is not connected'), false)).toEqual({
      status: 503,
      reason: 'Service Unavailable',
      cause: 'transport',
    });
    expect(failureFromError(new Error('gone'), true).cause).toBe('cancelled');
  });
});

describe('in-dialog translation', () => {
  it('our BYE Reason header (RFC 3326), none without a reason', () => {
    expect(byeHeaders({ q850: 16, text: 'call_maximum_time_reached' })).toEqual({
      Reason: 'Q.850;cause=16;text="call_maximum_time_reached"',
    });
    expect(byeHeaders(undefined)).toEqual({});
    expect(byeHeaders({})).toEqual({});
  });

  it('the far end BYE Reason → ended.reason', () => {
    expect(
      hangupReasonFromBye(srfRequest('BYE', ['Reason: Q.850;cause=16;text="Normal"'])),
    ).toEqual({
      q850: 16,
      text: 'Normal',
    });
    expect(hangupReasonFromBye(srfRequest('BYE'))).toBeUndefined();
    expect(hangupReasonFromBye(srfRequest('BYE', ['Reason: garbage;;']))).toEqual({
      text: 'garbage;;',
    });
  });

  it('re-INVITE offers, with hold seen (RFC 3264 §8.4)', () => {
    const hold = SDP.replace('a=sendrecv', 'a=sendonly');
    expect(
      offerFromRequest(srfRequest('INVITE', ['Content-Type: application/sdp'], hold), 'INVITE'),
    ).toEqual({
      sdp: hold,
      hold: true,
      method: 'INVITE',
    });
    expect(offerFromRequest(srfRequest('INVITE'), 'INVITE')).toBeUndefined();
  });

  it('INFO application/dtmf-relay and application/dtmf → dtmf', () => {
    expect(
      dtmfFromInfo(
        srfRequest(
          'INFO',
          ['Content-Type: application/dtmf-relay'],
          'Signal=5\r\nDuration=160\r\n',
        ),
      ),
    ).toEqual({ digit: '5', durationMs: 160 });
    expect(dtmfFromInfo(srfRequest('INFO', ['Content-Type: application/dtmf'], '#'))).toEqual({
      digit: '#',
      durationMs: 250,
    });
    expect(dtmfFromInfo(srfRequest('INFO', ['Content-Type: text/plain'], 'hi'))).toBeUndefined();
  });
});
