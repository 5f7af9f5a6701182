import { describe, expect, it } from 'vitest';
import type { MediaError } from './media-error.js';
import { generateSdesOfferKeys } from './sdes-offer-keys.js';
import { SessionSdp, type SessionSdpSettings } from './session-sdp.js';

const base: SessionSdpSettings = {
  address: '192.0.2.10',
  port: 20000,
  codecs: ['PCMU', 'PCMA'],
  telephoneEventPayloadType: 101,
  ptime: 20,
  offerRtcpMux: false,
};

/** RFC 4568 §9.1: `a=crypto:<tag> <suite> inline:<base64 of 16-byte key ‖ 14-byte salt>`. */
const CRYPTO = /^a=crypto:(\d+) (AES_CM_128_HMAC_SHA1_(?:80|32)) inline:([A-Za-z0-9+/]{40})$/;

function cryptoLines(sdp: string): { tag: number; suite: string; keySalt: Buffer }[] {
  return sdp
    .split('\r\n')
    .filter((l) => l.startsWith('a=crypto:'))
    .map((l) => {
      const m = CRYPTO.exec(l);
      if (!m) throw new Error(`not an a=crypto line we write: ${l}`);
      return { tag: Number(m[1]), suite: m[2]!, keySalt: Buffer.from(m[3]!, 'base64') };
    });
}

const withoutOrigin = (sdp: string): string => sdp.replace(/^o=.*$/m, 'o=');

function remote(lines: string[]): string {
  return [
    'v=0',
    'o=- 7 7 IN IP4 198.51.100.7',
    's=-',
    'c=IN IP4 198.51.100.7',
    't=0 0',
    ...lines,
    '',
  ].join('\r\n');
}

describe('SessionSdp with SDES (RFC 4568)', () => {
  it("'srtp' offers RTP/SAVP with two a=crypto, each a fresh 30-byte key", () => {
    const sdp = new SessionSdp({ ...base, srtp: 'srtp', sdesKeys: generateSdesOfferKeys() });
    const offer = sdp.offer();
    expect(offer).toContain('\r\nm=audio 20000 RTP/SAVP 0 8 101\r\n');
    const lines = cryptoLines(offer);
    expect(lines.map((l) => [l.tag, l.suite])).toEqual([
      [1, 'AES_CM_128_HMAC_SHA1_80'],
      [2, 'AES_CM_128_HMAC_SHA1_32'],
    ]);
    for (const l of lines) expect(l.keySalt).toHaveLength(30);
    expect(lines[0]!.keySalt.equals(lines[1]!.keySalt)).toBe(false);
    // in the media section, after the RTCP port (sdp-transform's attribute order)
    expect(offer).toMatch(
      /a=rtcp:20001\r\na=crypto:1 [^\r]+\r\na=crypto:2 [^\r]+\r\na=ptime:20\r\n/,
    );
    // the same keys in every offer of the session; another session has others
    expect(cryptoLines(sdp.offer())).toEqual(lines);
    const other = new SessionSdp({ ...base, srtp: 'srtp', sdesKeys: generateSdesOfferKeys() });
    expect(cryptoLines(other.offer())[0]!.keySalt.equals(lines[0]!.keySalt)).toBe(false);
  });

  it("'srtp-optional' offers the a=crypto on RTP/AVP; 'rtp' offers what it always did", () => {
    const keys = generateSdesOfferKeys();
    const optional = new SessionSdp({ ...base, srtp: 'srtp-optional', sdesKeys: keys }).offer();
    expect(optional).toContain('\r\nm=audio 20000 RTP/AVP 0 8 101\r\n');
    expect(cryptoLines(optional)).toHaveLength(2);
    const plain = new SessionSdp({ ...base, srtp: 'rtp' }).offer();
    expect(plain).not.toContain('a=crypto');
    expect(withoutOrigin(plain)).toBe(withoutOrigin(new SessionSdp(base).offer()));
    expect(withoutOrigin(plain)).toBe(
      [
        'v=0',
        'o=',
        's=-',
        'c=IN IP4 192.0.2.10',
        't=0 0',
        'm=audio 20000 RTP/AVP 0 8 101',
        'a=rtpmap:0 PCMU/8000',
        'a=rtpmap:8 PCMA/8000',
        'a=rtpmap:101 telephone-event/8000',
        'a=fmtp:101 0-16',
        'a=rtcp:20001',
        'a=ptime:20',
        'a=sendrecv',
        '',
      ].join('\r\n'),
    );
  });

  it('answers an SRTP offer on its profile with one a=crypto: our key under its tag', () => {
    const keys = generateSdesOfferKeys();
    const sdp = new SessionSdp({ ...base, srtp: 'srtp', sdesKeys: keys });
    const theirKey = Buffer.alloc(30, 0x5a).toString('base64');
    const offer = remote([
      'm=audio 30000 RTP/SAVP 0 101',
      'a=rtpmap:101 telephone-event/8000',
      `a=crypto:7 AES_CM_128_HMAC_SHA1_32 inline:${theirKey}|2^31`,
      `a=crypto:8 AES_CM_128_HMAC_SHA1_80 inline:${theirKey}`,
    ]);
    const n = sdp.readOffer(offer);
    expect(n.media.profile).toBe('RTP/SAVP');
    expect(n.srtp?.receive.masterKey).toEqual(Buffer.alloc(16, 0x5a));
    const answer = sdp.answer(n);
    expect(answer).toContain('\r\nm=audio 20000 RTP/SAVP 0 101\r\n');
    const [line, ...more] = cryptoLines(answer);
    expect(more).toEqual([]);
    expect(line!.tag).toBe(7);
    expect(line!.suite).toBe('AES_CM_128_HMAC_SHA1_32');
    expect(line!.keySalt).toEqual(Buffer.concat([keys[1]!.masterKey, keys[1]!.masterSalt]));
  });

  it('answers a best-effort offer (RTP/AVP with a=crypto) on RTP/AVP with SRTP', () => {
    const sdp = new SessionSdp({
      ...base,
      srtp: 'srtp-optional',
      sdesKeys: generateSdesOfferKeys(),
    });
    const key = Buffer.alloc(30, 1).toString('base64');
    const n = sdp.readOffer(
      remote(['m=audio 30000 RTP/AVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]),
    );
    const answer = sdp.answer(n);
    expect(answer).toContain('\r\nm=audio 20000 RTP/AVP 0\r\n');
    expect(cryptoLines(answer).map((l) => l.tag)).toEqual([1]);
  });

  it("reads an 'srtp' answer, and refuses one without crypto as srtp_negotiation_failed", () => {
    const keys = generateSdesOfferKeys();
    const sdp = new SessionSdp({ ...base, srtp: 'srtp', sdesKeys: keys });
    sdp.offer();
    const plain = remote(['m=audio 30000 RTP/AVP 0']);
    expect(() => sdp.readAnswer(plain)).toThrow(
      expect.objectContaining({ code: 'srtp_negotiation_failed' }) as MediaError,
    );
    const key = Buffer.alloc(30, 2).toString('base64');
    const n = sdp.readAnswer(
      remote(['m=audio 30000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]),
    );
    expect(n.srtp).toMatchObject({ suite: 'AES_CM_128_HMAC_SHA1_80', tag: 1, send: keys[0] });
  });

  it("'rtp' still refuses RTP/SAVP as sdp_error", () => {
    const sdp = new SessionSdp(base);
    expect(() => sdp.readAnswer(remote(['m=audio 30000 RTP/SAVP 0']))).toThrow(
      expect.objectContaining({ code: 'sdp_error' }) as MediaError,
    );
  });
});
