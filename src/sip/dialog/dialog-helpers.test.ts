// Hold detection and default answers (RFC 3264), DTMF INFO bodies,
// Session-Expires (RFC 4028).

import { describe, expect, it } from 'vitest';
import { parseDtmfInfo } from './dtmf-relay.js';
import { defaultAnswer, isHold, sdpDirection } from './sdp-direction.js';
import { parseSessionExpires } from './session-timer.js';

const BASE =
  'v=0\r\no=x 1 7 IN IP4 10.0.0.1\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

describe('sdp direction', () => {
  it('detects hold: sendonly, inactive, c=0.0.0.0; not sendrecv/recvonly', () => {
    expect(isHold(BASE + 'a=sendonly\r\n')).toBe(true);
    expect(isHold(BASE + 'a=inactive\r\n')).toBe(true);
    expect(isHold(BASE.replace('c=IN IP4 10.0.0.1', 'c=IN IP4 0.0.0.0'))).toBe(true);
    expect(isHold(BASE)).toBe(false);
    expect(isHold(BASE + 'a=recvonly\r\n')).toBe(false);
  });

  it('media-level direction wins over session level', () => {
    expect(
      sdpDirection(BASE.replace('t=0 0\r\n', 't=0 0\r\na=sendonly\r\n') + 'a=sendrecv\r\n'),
    ).toBe('sendrecv');
  });

  it('default answer mirrors the direction and bumps the o= version', () => {
    const ans = defaultAnswer(BASE + 'a=sendrecv\r\n', BASE + 'a=sendonly\r\n');
    expect(ans).toContain('a=recvonly');
    expect(ans).not.toContain('a=sendrecv');
    expect(ans).toContain('o=x 1 8 IN IP4');
    expect(defaultAnswer(BASE, BASE + 'a=inactive\r\n')).toContain('a=inactive');
  });
});

describe('DTMF INFO', () => {
  it('application/dtmf-relay', () => {
    expect(parseDtmfInfo('application/dtmf-relay', 'Signal=5\r\nDuration=160\r\n')).toEqual({
      digit: '5',
      durationMs: 160,
    });
    expect(parseDtmfInfo('application/dtmf-relay', 'Signal=#\r\n')).toEqual({
      digit: '#',
      durationMs: 250,
    });
    expect(parseDtmfInfo('application/dtmf-relay', 'Signal=11\r\n')).toEqual({
      digit: '#',
      durationMs: 250,
    });
    expect(parseDtmfInfo('application/dtmf-relay', 'Signal=x\r\n')).toBeUndefined();
  });

  it('application/dtmf and others', () => {
    expect(parseDtmfInfo('application/dtmf; charset=x', '*')).toEqual({
      digit: '*',
      durationMs: 250,
    });
    expect(parseDtmfInfo('text/plain', '5')).toBeUndefined();
  });
});

describe('Session-Expires', () => {
  it('parses interval and refresher', () => {
    expect(parseSessionExpires('1800;refresher=uac')).toEqual({ seconds: 1800, refresher: 'uac' });
    expect(parseSessionExpires('90')).toEqual({ seconds: 90, refresher: undefined });
    expect(parseSessionExpires('x')).toBeUndefined();
    expect(parseSessionExpires(undefined)).toBeUndefined();
  });
});
