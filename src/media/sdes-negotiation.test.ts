import { describe, expect, it } from 'vitest';
import { MediaError } from './media-error.js';
import { SdesNegotiation } from './sdes-negotiation.js';
import type { SdesOfferKeys } from './sdes-offer-keys.js';
import { formatSdesCryptoAttribute, type SdesCryptoAttribute } from './srtp/index.js';
import type { SrtpSuiteName } from './srtp/index.js';

const S80: SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80';
const S32: SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_32';

function key(tag: number, suite: SrtpSuiteName, fill: number): SdesCryptoAttribute {
  return {
    tag,
    suite,
    masterKey: Buffer.alloc(16, fill),
    masterSalt: Buffer.alloc(14, fill + 1),
    lifetime: null,
    windowSizeHint: null,
  };
}

const OURS: SdesOfferKeys = [key(1, S80, 0x10), key(2, S32, 0x20)];
/** 16 × 0x10 then 14 × 0x11, base64: our tag 1 key. */
const OUR_KEY_1 = Buffer.concat([Buffer.alloc(16, 0x10), Buffer.alloc(14, 0x11)]).toString(
  'base64',
);
const theirs = (tag: number, suite: SrtpSuiteName, fill = 0x40): string =>
  formatSdesCryptoAttribute(key(tag, suite, fill));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof MediaError ? err.code : 'not a MediaError';
  }
  return undefined;
}

describe('SdesNegotiation: our offer (RFC 4568 §5.1.1)', () => {
  it("'srtp' offers RTP/SAVP and one a=crypto per key: tag 1 _80, tag 2 _32", () => {
    const sdes = new SdesNegotiation('srtp', OURS);
    expect(sdes.offerProfile()).toBe('RTP/SAVP');
    const lines = sdes.offerCrypto();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`1 AES_CM_128_HMAC_SHA1_80 inline:${OUR_KEY_1}`);
    expect(lines[1]).toMatch(/^2 AES_CM_128_HMAC_SHA1_32 inline:[A-Za-z0-9+/]{40}$/);
  });

  it("'srtp-optional' offers the same a=crypto on RTP/AVP; 'rtp' offers none", () => {
    const optional = new SdesNegotiation('srtp-optional', OURS);
    expect(optional.offerProfile()).toBe('RTP/AVP');
    expect(optional.offerCrypto()).toEqual(new SdesNegotiation('srtp', OURS).offerCrypto());
    const plain = new SdesNegotiation('rtp', null);
    expect(plain.offerProfile()).toBe('RTP/AVP');
    expect(plain.offerCrypto()).toEqual([]);
    expect(plain.allowsSavp).toBe(false);
  });

  it('needs our keys for an SRTP mode', () => {
    expect(() => new SdesNegotiation('srtp', null)).toThrow(/keys/);
    expect(() => new SdesNegotiation('srtp-optional', [])).toThrow(/keys/);
  });
});

describe('SdesNegotiation: the answer (RFC 4568 §5.1.3)', () => {
  it('sends with our key of the answered tag and receives with the answer’s key', () => {
    const sdes = new SdesNegotiation('srtp', OURS);
    const answer = theirs(2, S32);
    const keys = sdes.readAnswer('RTP/SAVP', [answer])!;
    expect(keys.suite).toBe(S32);
    expect(keys.tag).toBe(2);
    expect(keys.send).toBe(OURS[1]);
    expect(keys.receive.masterKey).toEqual(Buffer.alloc(16, 0x40));
    expect(keys.receive.masterSalt).toEqual(Buffer.alloc(14, 0x41));
    expect(sdes.keys).toBe(keys);
  });

  it.each([
    ['RTP/AVP with a=crypto', 'RTP/AVP', [theirs(1, S80)]],
    ['RTP/SAVP without a=crypto', 'RTP/SAVP', []],
    ['two a=crypto', 'RTP/SAVP', [theirs(1, S80), theirs(2, S32)]],
    ['a tag we did not offer', 'RTP/SAVP', [theirs(3, S80)]],
    ['tag 1 with the suite of tag 2', 'RTP/SAVP', [theirs(1, S32)]],
    ['a short key', 'RTP/SAVP', ['1 AES_CM_128_HMAC_SHA1_80 inline:AAAA']],
    ['an unknown suite', 'RTP/SAVP', ['1 F8_128_HMAC_SHA1_80 inline:' + OUR_KEY_1]],
    ['an MKI', 'RTP/SAVP', [`1 AES_CM_128_HMAC_SHA1_80 inline:${OUR_KEY_1}|2^20|1:4`]],
  ] as const)("'srtp' refuses an answer with %s, and keeps no keys", (_, profile, crypto) => {
    const sdes = new SdesNegotiation('srtp', OURS);
    expect(codeOf(() => sdes.readAnswer(profile, crypto))).toBe('srtp_negotiation_failed');
    expect(sdes.keys).toBeNull();
  });

  it("'srtp-optional': a plain answer is plain RTP, one with a=crypto is SRTP", () => {
    expect(new SdesNegotiation('srtp-optional', OURS).readAnswer('RTP/AVP', [])).toBeNull();
    const keys = new SdesNegotiation('srtp-optional', OURS).readAnswer('RTP/AVP', [theirs(1, S80)]);
    expect(keys?.suite).toBe(S80);
    const savp = new SdesNegotiation('srtp-optional', OURS);
    expect(codeOf(() => savp.readAnswer('RTP/SAVP', []))).toBe('srtp_negotiation_failed');
    const bad = new SdesNegotiation('srtp-optional', OURS);
    expect(codeOf(() => bad.readAnswer('RTP/AVP', [theirs(9, S80)]))).toBe(
      'srtp_negotiation_failed',
    );
  });

  it("'rtp' ignores a=crypto", () => {
    expect(new SdesNegotiation('rtp', null).readAnswer('RTP/AVP', [theirs(1, S80)])).toBeNull();
  });
});

describe('SdesNegotiation: offers from the far end (RFC 4568 §5.1.2, §7.1.4)', () => {
  it('takes the first usable a=crypto and answers with our key of its suite under its tag', () => {
    const sdes = new SdesNegotiation('srtp', OURS);
    const keys = sdes.readOffer('RTP/SAVP', [
      '4 F8_128_HMAC_SHA1_80 inline:' + OUR_KEY_1, // unknown suite: ignored
      theirs(5, S32),
      theirs(6, S80),
    ])!;
    expect(keys).toMatchObject({ suite: S32, tag: 5, send: OURS[1] });
    const [line] = sdes.answerCrypto(keys);
    const ourKey2 = Buffer.concat([Buffer.alloc(16, 0x20), Buffer.alloc(14, 0x21)]);
    expect(line).toBe(`5 AES_CM_128_HMAC_SHA1_32 inline:${ourKey2.toString('base64')}`);
    expect(sdes.answerCrypto(null)).toEqual([]);
  });

  it('keeps the suite and our key on a re-offer; a new far-end key is taken', () => {
    const sdes = new SdesNegotiation('srtp', OURS);
    const first = sdes.readOffer('RTP/SAVP', [theirs(1, S80, 0x40)])!;
    // same suite under another tag, a new key, the other suite offered first
    const again = sdes.readOffer('RTP/SAVP', [theirs(1, S32, 0x50), theirs(7, S80, 0x60)])!;
    expect(again).toMatchObject({ suite: S80, tag: 7, send: first.send });
    expect(again.receive.masterKey).toEqual(Buffer.alloc(16, 0x60));
  });

  it('refuses a re-offer without the suite in force, or without crypto, and keeps the keys', () => {
    const sdes = new SdesNegotiation('srtp-optional', OURS);
    const first = sdes.readOffer('RTP/AVP', [theirs(1, S80)]);
    expect(codeOf(() => sdes.readOffer('RTP/SAVP', [theirs(1, S32)]))).toBe(
      'srtp_negotiation_failed',
    );
    expect(codeOf(() => sdes.readOffer('RTP/AVP', []))).toBe('srtp_negotiation_failed');
    expect(sdes.keys).toBe(first);
  });

  it("'srtp' refuses a plain offer; 'srtp-optional' takes it plain, and crypto later", () => {
    expect(codeOf(() => new SdesNegotiation('srtp', OURS).readOffer('RTP/AVP', []))).toBe(
      'srtp_negotiation_failed',
    );
    const optional = new SdesNegotiation('srtp-optional', OURS);
    expect(optional.readOffer('RTP/AVP', [])).toBeNull();
    expect(codeOf(() => optional.readOffer('RTP/SAVP', ['1 junk']))).toBe(
      'srtp_negotiation_failed',
    );
    expect(optional.readOffer('RTP/AVP', [theirs(3, S80)])?.suite).toBe(S80);
  });

  it("'rtp' answers plain whatever the offer carries", () => {
    expect(new SdesNegotiation('rtp', null).readOffer('RTP/AVP', [theirs(1, S80)])).toBeNull();
  });
});
