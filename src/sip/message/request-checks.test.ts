import { describe, expect, it } from 'vitest';
import { parseMessage } from './parse-message.js';
import { checkIncomingRequest } from './request-checks.js';
import { checkIncomingResponse } from './response-checks.js';
import { BYE_TEXT, INVITE_TEXT, OK_TEXT } from './test-messages.js';
import type { SipRequest, SipResponse } from './types.js';

/** INVITE_TEXT with header lines replaced/added: `edit(name, line|null)`. */
function invite(edits: Record<string, string | null> = {}, text = INVITE_TEXT): SipRequest {
  let t = text;
  for (const [name, line] of Object.entries(edits)) {
    const re = new RegExp(`^${name}:.*\\r\\n`, 'm');
    t = re.test(t)
      ? t.replace(re, line === null ? '' : line + '\r\n')
      : t.replace('\r\n', '\r\n' + line + '\r\n');
  }
  return parseMessage(Buffer.from(t)) as SipRequest;
}
const status = (r: SipRequest, opts = {}) => checkIncomingRequest(r, opts)?.status ?? null;

describe('checkIncomingRequest', () => {
  it('lets typical requests through', () => {
    expect(status(invite())).toBeNull();
    expect(status(parseMessage(Buffer.from(BYE_TEXT)) as SipRequest)).toBeNull();
  });

  it('400s missing or broken mandatory headers', () => {
    expect(checkIncomingRequest(invite({ 'Call-ID': null }))).toEqual({
      status: 400,
      reason: 'Bad Request (missing Call-ID)',
    });
    expect(status(invite({ 'Max-Forwards': null }))).toBe(400);
    expect(status(invite({ 'Max-Forwards': 'Max-Forwards: many' }))).toBe(400);
    expect(status(invite({ CSeq: 'CSeq: 1 BYE' }))).toBe(400);
    expect(status(invite({ From: 'From: Bad, Name <sip:a@b>;tag=1' }))).toBe(400);
    expect(status(invite({ Contact: 'Contact: <sip:a@b>;;' }))).toBe(400);
    expect(status(invite({ Date: 'Date: Fri, 01 Jan 2010 16:00:00 EST' }))).toBe(400);
    expect(status(invite({ Date: 'Date: Fri, 01 Jan 2010 16:00:00 GMT' }))).toBeNull();
  });

  it('400s conflicting single-value headers but takes exact repeats', () => {
    expect(status(invite({ Subject: 'To: <sip:other@example.com>' }))).toBe(400);
    expect(status(invite({ Subject: 'To: <sip:+15551234567@trunk.example.com>' }))).toBeNull();
  });

  it('accepts a missing Max-Forwards from an RFC 2543 client', () => {
    const r = invite({ 'Max-Forwards': null, Via: 'Via: SIP/2.0/UDP 192.0.2.10:5060' });
    expect(status(r)).toBeNull();
  });

  it('416s unknown Request-URI schemes, takes tel', () => {
    const r = invite();
    r.uri = 'mailto:a@b';
    expect(status(r)).toBe(416);
    r.uri = 'tel:+15551234567';
    expect(status(r)).toBeNull();
    expect(status(r, { uriSchemes: ['sip'] })).toBe(416);
  });

  it('483s Max-Forwards 0 except on OPTIONS', () => {
    expect(status(invite({ 'Max-Forwards': 'Max-Forwards: 0' }))).toBe(483);
  });

  it('420s unsupported Require tags (not on ACK)', () => {
    const r = invite({ Require: 'Require: timer, 100rel' });
    expect(checkIncomingRequest(r, { supported: ['TIMER'] })).toEqual({
      status: 420,
      reason: 'Bad Extension',
      headers: [{ name: 'unsupported', value: '100rel' }],
    });
    expect(status(r, { supported: ['timer', '100rel'] })).toBeNull();
  });

  it('415s bodies we cannot read and 400s a body without type', () => {
    expect(
      checkIncomingRequest(invite({ 'Content-Encoding': 'Content-Encoding: gzip' }))?.headers,
    ).toEqual([{ name: 'accept-encoding', value: 'identity' }]);
    expect(
      status(invite({ 'Content-Type': 'Content-Type: Application/SDP; charset=x' })),
    ).toBeNull();
    expect(status(invite({ 'Content-Type': null }))).toBe(400);
  });

  it('406s an Accept without SDP on INVITE', () => {
    expect(status(invite({ Accept: 'Accept: application/*' }))).toBeNull();
    expect(status(invite({ Accept: 'Accept: text/plain, */*;q=0.1' }))).toBeNull();
    expect(status(invite({ Accept: 'Accept: text/plain' }))).toBe(406);
    expect(status(invite({ Accept: 'Accept:' }))).toBe(406);
    expect(status(invite({ Accept: 'Accept: text/plain' }), { sdpAnswerMethods: [] })).toBeNull();
  });
});

describe('checkIncomingResponse', () => {
  it('passes a good response, drops broken ones', () => {
    const ok = parseMessage(Buffer.from(OK_TEXT)) as SipResponse;
    expect(checkIncomingResponse(ok)).toBeNull();
    const two = parseMessage(
      Buffer.from(OK_TEXT.replace('Via: ', 'Via: SIP/2.0/UDP x, ')),
    ) as SipResponse;
    expect(checkIncomingResponse(two)).toBe('more than one Via');
    const noCseq = parseMessage(
      Buffer.from(OK_TEXT.replace('CSeq: 1 INVITE\r\n', '')),
    ) as SipResponse;
    expect(checkIncomingResponse(noCseq)).toBe('missing CSeq');
  });
});
