import { describe, expect, it } from 'vitest';
import { findMessageLength } from './find-message-length.js';
import { getHeader, getHeaders } from './headers.js';
import { parseMessage } from './parse-message.js';
import { serializeMessage } from './serialize-message.js';
import { BYE_TEXT, INVITE_TEXT, OK_TEXT } from './test-messages.js';
import { SipParseError, type SipRequest, type SipResponse } from './types.js';

const b = (s: string) => Buffer.from(s, 'latin1');

function parseError(buf: Buffer): SipParseError {
  try {
    parseMessage(buf);
  } catch (err) {
    if (err instanceof SipParseError) return err;
    throw err;
  }
  throw new Error('parsed');
}

describe('parseMessage', () => {
  it('parses a request line, headers in wire order and the body', () => {
    const m = parseMessage(b(INVITE_TEXT)) as SipRequest;
    expect([m.kind, m.method, m.uri, m.version]).toEqual([
      'request',
      'INVITE',
      'sip:+15551234567@trunk.example.com:5060;transport=udp',
      'SIP/2.0',
    ]);
    expect(m.headers[0]).toEqual({
      name: 'via',
      value: 'SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bKa8Zq4pT1vX9cR2mN5kL7;rport',
    });
    expect(m.headers.map((h) => h.name)).toContain('call-id');
    expect(m.body.toString()).toMatch(/^v=0\r\n[\s\S]*a=sendrecv\r\n$/);
  });

  it('parses a status line', () => {
    const m = parseMessage(b(OK_TEXT)) as SipResponse;
    expect([m.kind, m.status, m.reason]).toEqual(['response', 200, 'OK']);
    expect(getHeaders(m, 'record-route')).toEqual([
      '<sip:198.51.100.1;lr>',
      '<sip:198.51.100.2;lr>',
    ]);
  });

  it('takes bare LF line ends, leading CRLFs, folding and compact names', () => {
    const text =
      '\r\n\r\nOPTIONS sip:a@b SIP/2.0\n' +
      'v: SIP/2.0/UDP h;branch=z9hG4bK1\n' +
      'i: abc\n' +
      'SUBJECT: one\n  two\n\tthree\n' +
      'l: 3\n\nxyzEXTRA';
    const m = parseMessage(b(text));
    expect(getHeader(m, 'Via')).toBe('SIP/2.0/UDP h;branch=z9hG4bK1');
    expect(getHeader(m, 'call-id')).toBe('abc');
    expect(getHeader(m, 's')).toBe('one two three');
    expect(m.body.toString()).toBe('xyz');
  });

  it('takes the rest of the datagram as body without Content-Length', () => {
    const m = parseMessage(b('MESSAGE sip:a@b SIP/2.0\r\nCall-ID: x\r\n\r\nhello'));
    expect(m.body.toString()).toBe('hello');
  });

  it('keeps UTF-8 in header values', () => {
    const m = parseMessage(Buffer.from('SIP/2.0 486 Besetzt ü\r\nSubject: Grüße\r\n\r\n', 'utf8'));
    expect((m as SipResponse).reason).toBe('Besetzt ü');
    expect(getHeader(m, 'subject')).toBe('Grüße');
  });

  it('rejects with 400/505 and the partial request when it can be answered', () => {
    const clerr = parseError(
      b('INVITE sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h\r\nContent-Length: 10\r\n\r\nabc'),
    );
    expect(clerr.status).toBe(400);
    expect(clerr.request?.headers[0]).toEqual({ name: 'via', value: 'SIP/2.0/UDP h' });
    expect(parseError(b('INVITE sip:a@b SIP/3.0\r\nCall-ID: x\r\n\r\n')).status).toBe(505);
    expect(parseError(b('INVITE sip:a@b SIP/2.0\r\nno colon here\r\n\r\n')).status).toBe(400);
    expect(parseError(b('INVITE sip:a@b SIP/2.0\r\nContent-Length: -1\r\n\r\n')).status).toBe(400);
    expect(parseError(b('INVITE sip:a@b SIP/2.0\r\nl: 1\r\nl: 2\r\n\r\nab')).status).toBe(400);
  });

  it('drops responses and garbage without a status', () => {
    expect(parseError(b('SIP/2.0 99 Low\r\n\r\n')).status).toBeUndefined();
    expect(parseError(b('SIP/2.0 200 OK\r\nbroken\r\n\r\n')).status).toBeUndefined();
    expect(parseError(b('\x00\x01\x02')).status).toBeUndefined();
    expect(parseError(b('')).status).toBeUndefined();
  });
});

describe('serializeMessage', () => {
  it('round-trips typical messages byte for byte', () => {
    for (const text of [INVITE_TEXT, OK_TEXT, BYE_TEXT]) {
      expect(serializeMessage(parseMessage(b(text))).toString('latin1')).toBe(text);
    }
  });

  it('corrects or adds Content-Length and uses wire spellings', () => {
    const m = parseMessage(
      b('MESSAGE sip:a@b SIP/2.0\r\ni: x\r\nl: 2\r\nl: 2\r\nx-foo-bar: 1\r\n\r\nab'),
    );
    m.body = Buffer.from('hey');
    expect(serializeMessage(m).toString()).toBe(
      'MESSAGE sip:a@b SIP/2.0\r\nCall-ID: x\r\nContent-Length: 3\r\nX-Foo-Bar: 1\r\n\r\nhey',
    );
    m.headers = [];
    expect(serializeMessage(m).toString()).toBe(
      'MESSAGE sip:a@b SIP/2.0\r\nContent-Length: 3\r\n\r\nhey',
    );
  });
});

describe('findMessageLength', () => {
  const two = b(BYE_TEXT + '\r\n' + INVITE_TEXT);
  it('frames messages in a stream buffer', () => {
    const first = findMessageLength(two, 0);
    expect(first).toBe(BYE_TEXT.length);
    expect(findMessageLength(two, first)).toBe(INVITE_TEXT.length + 2);
    expect(findMessageLength(two.subarray(0, two.length - 1), first)).toBe(-1);
    expect(findMessageLength(b(INVITE_TEXT.slice(0, 100)), 0)).toBe(-1);
    expect(findMessageLength(b('\r\n\r\n'), 0)).toBe(-1);
  });

  it('throws when the stream cannot be framed', () => {
    expect(() => findMessageLength(b('BYE x SIP/2.0\r\nl: x\r\n\r\n'))).toThrow(SipParseError);
    expect(() =>
      findMessageLength(b('BYE x SIP/2.0\r\nl: 1\r\nContent-Length: 2\r\n\r\n')),
    ).toThrow(SipParseError);
    expect(() => findMessageLength(Buffer.alloc(70_000, 0x41))).toThrow(SipParseError);
  });

  it('counts a missing Content-Length as 0', () => {
    expect(findMessageLength(b('BYE x SIP/2.0\r\nCall-ID: 1\r\n\r\nNEXT'))).toBe(29);
  });
});
