/**
 * The SDP `a=crypto` attribute of SDP Security Descriptions (RFC 4568 §9.1,
 * SRTP key parameters §9.2). Pure: no I/O.
 *
 *   a=crypto:<tag> <crypto-suite> inline:<key||salt base64>[|<lifetime>][|<MKI>:<length>]
 *            [<session-param> …]
 *   a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz|2^20
 *
 * We take one inline key per attribute and no MKI (our SRTP packets carry
 * none); the attribute value is what follows `a=crypto:`.
 */
import { randomBytes } from 'node:crypto';
import { isSrtpSuiteName, SRTP_SUITES, type SrtpSuiteName } from './srtp-suite.js';

/** One parsed `a=crypto` line: structurally the keying material SrtpSender/SrtpReceiver take. */
export interface SdesCryptoAttribute {
  /** RFC 4568 §4.1: 1 to 9 digits; the answer echoes the tag of the offer it accepts. */
  tag: number;
  suite: SrtpSuiteName;
  /** 16 bytes. */
  masterKey: Buffer;
  /** 14 bytes. */
  masterSalt: Buffer;
  /** §6.1: master key lifetime in SRTP packets, if given; null means the default, 2^48. */
  lifetime: number | null;
  /** §6.3.6 WSH: the replay window size the sender suggests, if given. */
  windowSizeHint: number | null;
}

/** Why an `a=crypto` value was refused. */
export type SdesCryptoErrorReason =
  'syntax' | 'unknown_suite' | 'bad_key' | 'mki_unsupported' | 'unsupported_parameter';

/** The result of parsing: the attribute, or why it was refused. */
export type SdesCryptoParseResult =
  | { ok: true; attribute: SdesCryptoAttribute }
  | { ok: false; reason: SdesCryptoErrorReason; message: string };

const TAG = /^\d{1,9}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const LIFETIME_POWER = /^2\^(\d{1,2})$/;
const LIFETIME_DECIMAL = /^\d{1,15}$/;
const MKI = /^\d+:\d{1,3}$/;
const WSH = /^WSH=(\d{1,10})$/;
/** RFC 3711 §3.2.1: a master key protects at most 2^48 SRTP packets. */
const MAX_LIFETIME = 2 ** 48;

/** RFC 4568 §9.1: parses an `a=crypto` attribute value; never throws. */
export function parseSdesCryptoAttribute(value: string): SdesCryptoParseResult {
  const fields = value.trim().split(/[ \t]+/);
  const [tagText, suiteText, keyParams, ...sessionParams] = fields;
  if (tagText === undefined || suiteText === undefined || keyParams === undefined) {
    return refuse('syntax', 'a=crypto needs a tag, a crypto suite and key parameters');
  }
  if (!TAG.test(tagText)) return refuse('syntax', `a=crypto tag must be 1 to 9 digits`);
  if (!isSrtpSuiteName(suiteText)) {
    return refuse('unknown_suite', `unsupported crypto suite ${suiteText}`);
  }
  const suite = SRTP_SUITES[suiteText];
  // §9.1: key-params = key-param *(";" key-param); several keys need MKIs
  if (keyParams.includes(';')) {
    return refuse('mki_unsupported', 'several master keys (which need an MKI) are not supported');
  }
  if (!keyParams.startsWith('inline:')) return refuse('syntax', 'key method must be inline');
  const [keySalt = '', ...extras] = keyParams.slice('inline:'.length).split('|');
  if (extras.length > 2) return refuse('syntax', 'too many | fields in the inline key');

  const expected = suite.masterKeyLength + suite.masterSaltLength;
  if (!BASE64.test(keySalt) || keySalt.length % 4 !== 0) {
    return refuse('bad_key', 'inline key is not valid base64');
  }
  const bytes = Buffer.from(keySalt, 'base64');
  if (bytes.length !== expected) {
    return refuse(
      'bad_key',
      `${suite.name} needs a ${expected}-byte key and salt, got ${bytes.length}`,
    );
  }

  let lifetime: number | null = null;
  for (const [i, extra] of extras.entries()) {
    // §9.2: srtp-key-info = key-salt ["|" lifetime] ["|" mki]
    if (MKI.test(extra)) {
      return refuse('mki_unsupported', 'MKI is not supported: offer the key without |MKI:length');
    }
    if (i > 0 || lifetime !== null) return refuse('syntax', `unexpected key field ${extra}`);
    lifetime = parseLifetime(extra);
    if (lifetime === null) return refuse('syntax', `bad key lifetime ${extra}`);
  }

  let windowSizeHint: number | null = null;
  for (const param of sessionParams) {
    const wsh = WSH.exec(param);
    if (wsh !== null) {
      windowSizeHint = Number(wsh[1]); // §6.3.6: a hint; our window stays 64
    } else if (param === 'FEC_ORDER=FEC_SRTP' || param === 'FEC_ORDER=SRTP_FEC') {
      // §6.3.4: we apply no FEC, so the order does not matter
    } else if (param.startsWith('-')) {
      // §6.3.7: a session parameter prefixed with "-" is optional and may be ignored
    } else {
      // §6.3.7: any other unknown or unsupported parameter makes the attribute invalid
      return refuse('unsupported_parameter', `unsupported session parameter ${param}`);
    }
  }

  return {
    ok: true,
    attribute: {
      tag: Number(tagText),
      suite: suite.name,
      masterKey: bytes.subarray(0, suite.masterKeyLength),
      masterSalt: bytes.subarray(suite.masterKeyLength),
      lifetime,
      windowSizeHint,
    },
  };
}

/** RFC 4568 §9.1: the `a=crypto` value (without `a=crypto:`) for an attribute. */
export function formatSdesCryptoAttribute(
  attribute: Pick<SdesCryptoAttribute, 'tag' | 'suite' | 'masterKey' | 'masterSalt'> & {
    lifetime?: number | null;
  },
): string {
  const keySalt = Buffer.concat([attribute.masterKey, attribute.masterSalt]).toString('base64');
  const lifetime =
    attribute.lifetime === undefined || attribute.lifetime === null
      ? ''
      : `|${formatLifetime(attribute.lifetime)}`;
  return `${attribute.tag} ${attribute.suite} inline:${keySalt}${lifetime}`;
}

/** RFC 4568 §6.1: a fresh random master key and salt (crypto.randomBytes) for `suite`. */
export function generateSdesCryptoAttribute(
  tag: number,
  suite: SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80',
): SdesCryptoAttribute {
  const { masterKeyLength, masterSaltLength } = SRTP_SUITES[suite];
  const bytes = randomBytes(masterKeyLength + masterSaltLength);
  return {
    tag,
    suite,
    masterKey: bytes.subarray(0, masterKeyLength),
    masterSalt: bytes.subarray(masterKeyLength),
    lifetime: null,
    windowSizeHint: null,
  };
}

function parseLifetime(text: string): number | null {
  const power = LIFETIME_POWER.exec(text);
  const lifetime =
    power !== null ? 2 ** Number(power[1]) : LIFETIME_DECIMAL.test(text) ? Number(text) : NaN;
  return lifetime >= 1 && lifetime <= MAX_LIFETIME ? lifetime : null;
}

function formatLifetime(lifetime: number): string {
  const exponent = Math.log2(lifetime);
  return Number.isInteger(exponent) ? `2^${exponent}` : String(lifetime);
}

function refuse(reason: SdesCryptoErrorReason, message: string): SdesCryptoParseResult {
  return { ok: false, reason, message };
}
