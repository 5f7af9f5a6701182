/**
 * The master keys one session offers (RFC 4568 §6.1: a fresh random key per
 * a=crypto line), one per suite we speak: tag 1 AES_CM_128_HMAC_SHA1_80,
 * tag 2 AES_CM_128_HMAC_SHA1_32, the order of preference. They live as long
 * as the session: every offer and answer it writes carries the same ones.
 */
import {
  formatSdesCryptoAttribute,
  generateSdesCryptoAttribute,
  parseSdesCryptoAttribute,
  type SdesCryptoAttribute,
} from './srtp/index.js';

/** Our keys by tag, preferred first. */
export type SdesOfferKeys = readonly SdesCryptoAttribute[];

/** Fresh keys for a new session (crypto.randomBytes). */
export function generateSdesOfferKeys(): SdesOfferKeys {
  return [
    generateSdesCryptoAttribute(1, 'AES_CM_128_HMAC_SHA1_80'),
    generateSdesCryptoAttribute(2, 'AES_CM_128_HMAC_SHA1_32'),
  ];
}

/** As `a=crypto` values, to hand them to the media worker thread. */
export function sdesOfferKeysToValues(keys: SdesOfferKeys): string[] {
  return keys.map((k) => formatSdesCryptoAttribute(k));
}

/** Back from `sdesOfferKeysToValues`; throws on a value that does not parse (a bug). */
export function sdesOfferKeysFromValues(values: readonly string[]): SdesOfferKeys {
  return values.map((value) => {
    const parsed = parseSdesCryptoAttribute(value);
    if (!parsed.ok) throw new Error(`our own a=crypto does not parse: ${parsed.reason}`);
    return parsed.attribute;
  });
}
