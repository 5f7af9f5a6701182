import { describe, expect, it } from 'vitest';
import {
  formatSdesCryptoAttribute,
  generateSdesCryptoAttribute,
  parseSdesCryptoAttribute,
  type SdesCryptoAttribute,
  type SdesCryptoParseResult,
} from './sdes-crypto-attribute.js';
import { SrtpReceiver } from './srtp-receiver.js';
import { SrtpSender } from './srtp-sender.js';

// RFC 4568 §8.1's example key: 30 bytes of key || salt
const KEY = 'WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz';
const KEY_BYTES = Buffer.from(KEY, 'base64');

const parsed = (value: string): SdesCryptoAttribute => {
  const r = parseSdesCryptoAttribute(value);
  if (!r.ok) throw new Error(`refused: ${r.reason} ${r.message}`);
  return r.attribute;
};
const refusal = (value: string): Omit<Extract<SdesCryptoParseResult, { ok: false }>, 'ok'> => {
  const r = parseSdesCryptoAttribute(value);
  if (r.ok) throw new Error('accepted');
  return { reason: r.reason, message: r.message };
};

describe('SDES a=crypto attribute (RFC 4568 §9.1)', () => {
  it('parses tag, suite, key and salt', () => {
    const a = parsed(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}`);
    expect(a).toEqual({
      tag: 1,
      suite: 'AES_CM_128_HMAC_SHA1_80',
      masterKey: KEY_BYTES.subarray(0, 16),
      masterSalt: KEY_BYTES.subarray(16),
      lifetime: null,
      windowSizeHint: null,
    });
  });

  it('parses the _32 suite, a lifetime (2^n or decimal), WSH, FEC_ORDER, "-" parameters', () => {
    expect(parsed(`2 AES_CM_128_HMAC_SHA1_32 inline:${KEY}|2^20`)).toMatchObject({
      tag: 2,
      suite: 'AES_CM_128_HMAC_SHA1_32',
      lifetime: 2 ** 20,
    });
    expect(parsed(`3 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|1000000`).lifetime).toBe(1_000_000);
    expect(
      parsed(`4 AES_CM_128_HMAC_SHA1_80 inline:${KEY} WSH=128 FEC_ORDER=FEC_SRTP -X_FUTURE=1`),
    ).toMatchObject({ tag: 4, windowSizeHint: 128 });
    expect(parsed(`  123456789\tAES_CM_128_HMAC_SHA1_80  inline:${KEY}  `).tag).toBe(123456789);
  });

  it('refuses an unknown or mis-cased suite', () => {
    expect(refusal(`1 AES_256_CM_HMAC_SHA1_80 inline:${KEY}`).reason).toBe('unknown_suite');
    expect(refusal(`1 F8_128_HMAC_SHA1_80 inline:${KEY}`).reason).toBe('unknown_suite');
    expect(refusal(`1 aes_cm_128_hmac_sha1_80 inline:${KEY}`).reason).toBe('unknown_suite');
  });

  it('refuses a key of the wrong length or bad base64', () => {
    const short = KEY_BYTES.subarray(0, 29).toString('base64');
    expect(refusal(`1 AES_CM_128_HMAC_SHA1_80 inline:${short}`)).toEqual({
      reason: 'bad_key',
      message: 'AES_CM_128_HMAC_SHA1_80 needs a 30-byte key and salt, got 29',
    });
    const long = Buffer.concat([KEY_BYTES, Buffer.alloc(3)]).toString('base64');
    expect(refusal(`1 AES_CM_128_HMAC_SHA1_80 inline:${long}`).reason).toBe('bad_key');
    expect(refusal(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY.slice(0, 39)}!`).reason).toBe('bad_key');
    expect(refusal(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY.slice(0, 38)}`).reason).toBe('bad_key');
    expect(refusal('1 AES_CM_128_HMAC_SHA1_80 inline:').reason).toBe('bad_key');
  });

  it('refuses an MKI, and says MKI is not supported', () => {
    for (const value of [
      `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|2^20|1:4`,
      `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|1:1`,
      `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|2^20|1:4;inline:${KEY}|2^20|2:4`,
    ]) {
      const r = refusal(value);
      expect(r.reason).toBe('mki_unsupported');
      expect(r.message).toMatch(/MKI/);
    }
  });

  it('refuses what it does not support or cannot read', () => {
    const refused = (value: string): string => refusal(value).reason;
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY} UNENCRYPTED_SRTP`)).toBe(
      'unsupported_parameter',
    );
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY} UNAUTHENTICATED_SRTP`)).toBe(
      'unsupported_parameter',
    );
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY} KDR=10`)).toBe('unsupported_parameter');
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY} SOMETHING_NEW`)).toBe(
      'unsupported_parameter',
    );
    expect(refused('1 AES_CM_128_HMAC_SHA1_80')).toBe('syntax');
    expect(refused('')).toBe('syntax');
    expect(refused(`x AES_CM_128_HMAC_SHA1_80 inline:${KEY}`)).toBe('syntax');
    expect(refused(`1234567890 AES_CM_128_HMAC_SHA1_80 inline:${KEY}`)).toBe('syntax');
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 uri:${KEY}`)).toBe('syntax');
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|2^49`)).toBe('syntax');
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|0`)).toBe('syntax');
    expect(refused(`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY}|2^20|2^20`)).toBe('syntax');
  });

  it('formats what it parses, and parses what it formats', () => {
    const value = `7 AES_CM_128_HMAC_SHA1_32 inline:${KEY}|2^31`;
    expect(formatSdesCryptoAttribute(parsed(value))).toBe(value);
    expect(formatSdesCryptoAttribute({ ...parsed(value), lifetime: 1000 })).toBe(
      `7 AES_CM_128_HMAC_SHA1_32 inline:${KEY}|1000`,
    );
    expect(formatSdesCryptoAttribute({ ...parsed(value), lifetime: null })).toBe(
      `7 AES_CM_128_HMAC_SHA1_32 inline:${KEY}`,
    );
  });

  it('generates fresh random keys that parse back and key an SRTP session', () => {
    const a = generateSdesCryptoAttribute(1);
    const b = generateSdesCryptoAttribute(1, 'AES_CM_128_HMAC_SHA1_32');
    expect(a.suite).toBe('AES_CM_128_HMAC_SHA1_80');
    expect(a.masterKey).toHaveLength(16);
    expect(a.masterSalt).toHaveLength(14);
    expect(a.masterKey.equals(b.masterKey)).toBe(false);
    const line = formatSdesCryptoAttribute(b);
    expect(line).toMatch(/^1 AES_CM_128_HMAC_SHA1_32 inline:[A-Za-z0-9+/]{40}$/);
    const offered = parsed(line);
    expect(offered).toEqual(b);
    const plain = Buffer.from('800000010000000000000001' + 'ff'.repeat(160), 'hex');
    const out = new SrtpReceiver(offered).unprotectRtp(new SrtpSender(b).protectRtp(plain));
    expect(out).toEqual(plain);
  });
});
