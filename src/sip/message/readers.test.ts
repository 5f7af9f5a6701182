// Byte vectors for the structured readers, and their round trips.

import { describe, expect, it } from 'vitest';
import { parseChallenge } from './challenge.js';
import { parseCSeq } from './cseq.js';
import { addHeader, getHeader, getHeaders, removeHeader, setHeader, splitList } from './headers.js';
import { canonicalHeaderName } from './header-names.js';
import { formatNameAddr, parseNameAddr } from './name-addr.js';
import { parseMessage } from './parse-message.js';
import { generateBranch, generateCallId, generateTag } from './random-ids.js';
import { findQ850Cause, parseReason } from './reason.js';
import { BYE_TEXT } from './test-messages.js';
import { SipParseError } from './types.js';
import { formatUri, parseUri } from './uri.js';
import { formatVia, parseVia } from './via.js';
import { parseWarning } from './warning.js';

describe('parseUri / formatUri', () => {
  it('reads every part of a SIP URI', () => {
    expect(
      parseUri('sips:alice:pw@Example.COM:5061;transport=TCP;lr;X=%41?subject=hi%20there&p=1'),
    ).toEqual({
      scheme: 'sips',
      user: 'alice',
      password: 'pw',
      host: 'Example.COM',
      port: 5061,
      params: { transport: 'TCP', lr: null, x: 'A' },
      headers: { subject: 'hi there', p: '1' },
    });
  });

  it('reads IPv6 references, tel and opaque URIs', () => {
    expect(parseUri('sip:[2001:db8::1]:5060;transport=udp')).toMatchObject({
      host: '[2001:db8::1]',
      port: 5060,
    });
    expect(parseUri('sip:[::1]')).toMatchObject({ host: '[::1]' });
    expect(parseUri('tel:+1-201-555-0123;phone-context=example.com')).toEqual({
      scheme: 'tel',
      user: '+1-201-555-0123',
      host: '',
      params: { 'phone-context': 'example.com' },
      headers: {},
    });
    expect(parseUri('urn:service:sos')).toMatchObject({
      scheme: 'urn',
      opaque: 'service:sos',
      host: '',
    });
  });

  it('rejects bad syntax', () => {
    for (const bad of [
      '',
      'sip',
      ':x',
      'sip:',
      'sip:@h',
      'sip:h:99999',
      'sip:h:x',
      'sip:a b',
      'sip:h;;x',
      'sip:%4',
      'sip:[::1',
      'sip:h?x',
    ]) {
      expect(() => parseUri(bad), bad).toThrow(SipParseError);
    }
  });

  it('escapes on format so that parse(format(u)) = u', () => {
    const u = parseUri('sip:%40user%3A:p%40ss@h;na%20me=v%3Bal?h%26=x%3Dy');
    expect(u).toMatchObject({
      user: '@user:',
      password: 'p@ss',
      params: { 'na me': 'v;al' },
      headers: { 'h&': 'x=y' },
    });
    expect(parseUri(formatUri(u))).toEqual(u);
    expect(formatUri(parseUri('sip:alice@h:5060;lr'))).toBe('sip:alice@h:5060;lr');
    expect(formatUri(parseUri('sip:%C3%BC@h'))).toBe('sip:%C3%BC@h');
  });
});

describe('parseNameAddr', () => {
  it('reads quoted and token display names, <> and params', () => {
    expect(parseNameAddr('"A \\"B\\" C" <sip:a@h;lr>;tag=x;Q=0.5;flag')).toEqual({
      displayName: 'A "B" C',
      uri: parseUri('sip:a@h;lr'),
      rawUri: 'sip:a@h;lr',
      params: { tag: 'x', q: '0.5', flag: null },
    });
    expect(parseNameAddr('Bob  Smith <sip:b@h>').displayName).toBe('Bob  Smith');
    expect(parseNameAddr('<sip:b@h>').displayName).toBeUndefined();
  });

  it('gives the params of a bare addr-spec to the header', () => {
    const na = parseNameAddr('sip:b@h;tag=1 ; expires = 30');
    expect([na.rawUri, na.uri.params, na.params]).toEqual([
      'sip:b@h',
      {},
      { tag: '1', expires: '30' },
    ]);
  });

  it('rejects malformed values', () => {
    for (const bad of [
      '"open <sip:a@h>',
      'A, B <sip:a@h>',
      '< sip:a@h >',
      '<sip:a@h',
      'sip:a@h?x=1',
      '<sip:a@h>;;',
      '<sip:a@h> junk',
      '',
    ]) {
      expect(() => parseNameAddr(bad), bad).toThrow(SipParseError);
    }
  });

  it('formats and round-trips', () => {
    const na = parseNameAddr('"Al\\\\ice" <sip:a@h;transport=tcp>;tag=9');
    expect(formatNameAddr(na)).toBe('"Al\\\\ice" <sip:a@h;transport=tcp>;tag=9');
    expect(parseNameAddr(formatNameAddr(na))).toEqual(na);
    na.uri.port = 5070;
    expect(formatNameAddr(na)).toBe('"Al\\\\ice" <sip:a@h:5070;transport=tcp>;tag=9');
  });
});

describe('parseVia / formatVia', () => {
  it('reads several entries, LWS and the RFC 3581 rport forms', () => {
    const v = parseVia(
      'SIP / 2.0 / udp 10.0.0.1 : 5060 ; branch = z9hG4bK1 ; rport, SIP/2.0/TCP [::1]:5070;rport=5070;received=::1;x',
    );
    expect(v).toEqual([
      {
        protocol: 'SIP/2.0',
        transport: 'UDP',
        host: '10.0.0.1',
        port: 5060,
        branch: 'z9hG4bK1',
        rport: null,
        params: { branch: 'z9hG4bK1', rport: null },
      },
      {
        protocol: 'SIP/2.0',
        transport: 'TCP',
        host: '[::1]',
        port: 5070,
        rport: 5070,
        received: '::1',
        params: { rport: '5070', received: '::1', x: null },
      },
    ]);
  });

  it('formats with the structured fields winning', () => {
    const [v] = parseVia('SIP/2.0/UDP h;branch=z9hG4bKx;rport;foo=1');
    v!.rport = 4000;
    v!.received = '192.0.2.1';
    expect(formatVia(v!)).toBe('SIP/2.0/UDP h;branch=z9hG4bKx;rport=4000;foo=1;received=192.0.2.1');
    expect(parseVia(formatVia(v!))[0]).toMatchObject({
      rport: 4000,
      received: '192.0.2.1',
      branch: 'z9hG4bKx',
    });
  });

  it('rejects malformed values', () => {
    for (const bad of [
      '',
      'SIP/2.0 h',
      'SIP/2.0/UDP',
      'SIP/2.0/UDP h;;',
      'SIP/2.0/UDP h;branch',
      'SIP/2.0/UDP h:70000',
      'SIP/2.0/UDP h,',
      'SIP/2.0/UDP h;rport=x',
    ]) {
      expect(() => parseVia(bad), bad).toThrow(SipParseError);
    }
  });
});

describe('parseCSeq', () => {
  it('reads number and method', () => {
    expect(parseCSeq('0009 \t INVITE')).toEqual({ seq: 9, method: 'INVITE' });
    expect(parseCSeq('2147483647 BYE')).toEqual({ seq: 2147483647, method: 'BYE' });
  });
  it('rejects > 2**31-1 and non-numbers (RFC 3261 §8.1.1.5)', () => {
    for (const bad of [
      '2147483648 BYE',
      '36893488147419103232 REGISTER',
      'x BYE',
      '1',
      '1 ',
      '-1 BYE',
      '1 B Y E',
    ]) {
      expect(() => parseCSeq(bad), bad).toThrow(SipParseError);
    }
  });
});

describe('parseReason / parseWarning / parseChallenge', () => {
  it('reads RFC 3326 reasons', () => {
    const r = parseReason(
      'Q.850;cause=17;text="User busy", SIP ;cause=600 ;text="Busy, \\"everywhere\\""',
    );
    expect(r).toEqual([
      { protocol: 'Q.850', cause: 17, text: 'User busy' },
      { protocol: 'SIP', cause: 600, text: 'Busy, "everywhere"' },
    ]);
    expect(findQ850Cause(r)).toBe(17);
    expect(() => parseReason('Q.850;cause=abc')).toThrow(SipParseError);
    expect(() => parseReason(';cause=1')).toThrow(SipParseError);
  });

  it('reads warnings', () => {
    expect(
      parseWarning('307 isi.edu "Session parameter \'foo\' not understood", 399 [::1]:5060 "x"'),
    ).toEqual([
      { code: 307, agent: 'isi.edu', text: "Session parameter 'foo' not understood" },
      { code: 399, agent: '[::1]:5060', text: 'x' },
    ]);
    for (const bad of ['1812 overture "In Progress"', '399 host', '399 host text', '']) {
      expect(() => parseWarning(bad), bad).toThrow(SipParseError);
    }
  });

  it('reads digest challenges', () => {
    expect(
      parseChallenge(
        'Digest realm="sip.example",nonce="abc", qop="auth,auth-int", algorithm=SHA-256, stale=TRUE, opaque="o", domain="sip:x"',
      ),
    ).toEqual({
      scheme: 'Digest',
      realm: 'sip.example',
      nonce: 'abc',
      qop: ['auth', 'auth-int'],
      algorithm: 'SHA-256',
      stale: true,
      opaque: 'o',
      domain: 'sip:x',
    });
    expect(() => parseChallenge('Digest realm')).toThrow(SipParseError);
    expect(() => parseChallenge('')).toThrow(SipParseError);
  });
});

describe('header access', () => {
  it('finds headers by any spelling and splits lists only', () => {
    const m = parseMessage(Buffer.from(BYE_TEXT));
    expect(canonicalHeaderName('I')).toBe('call-id');
    expect(canonicalHeaderName('X-Custom')).toBe('x-custom');
    expect(getHeader(m, 'CALL-ID')).toBe(getHeader(m, 'i'));
    expect(getHeaders(m, 'route')).toEqual(['<sip:198.51.100.2;lr>', '<sip:198.51.100.1;lr>']);
    expect(splitList('"a, b" <sip:x;p=","> , <sip:y>,,')).toEqual([
      '"a, b" <sip:x;p=",">',
      '<sip:y>',
    ]);
    m.headers.push({ name: 'www-authenticate', value: 'Digest realm="a", nonce="b"' });
    expect(getHeaders(m, 'WWW-Authenticate')).toEqual(['Digest realm="a", nonce="b"']);
  });

  it('sets, adds and removes', () => {
    const m = parseMessage(Buffer.from(BYE_TEXT));
    addHeader(m, 'v', 'SIP/2.0/UDP top;branch=z9hG4bKtop', { first: true });
    expect(getHeaders(m, 'via')[0]).toBe('SIP/2.0/UDP top;branch=z9hG4bKtop');
    addHeader(m, 'Route', '<sip:last;lr>');
    expect(getHeaders(m, 'route').at(-1)).toBe('<sip:last;lr>');
    setHeader(m, 'route', '<sip:only;lr>');
    expect(getHeaders(m, 'route')).toEqual(['<sip:only;lr>']);
    expect(m.headers.findIndex((h) => h.name === 'route')).toBe(3);
    expect(removeHeader(m, 'via')).toBe(2);
    expect(getHeader(m, 'via')).toBeUndefined();
    expect(() => setHeader(m, 'subject', 'a\r\nInjected: 1')).toThrow(TypeError);
  });
});

describe('random ids', () => {
  it('are tokens with the magic cookie and do not repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const b = generateBranch();
      expect(b).toMatch(/^z9hG4bK[A-Za-z0-9_-]{20}$/);
      seen.add(b);
    }
    expect(seen.size).toBe(10_000);
    expect(generateTag()).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(generateCallId('gw.example')).toMatch(/^[A-Za-z0-9_-]{24}@gw\.example$/);
    expect(generateCallId()).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });
});
