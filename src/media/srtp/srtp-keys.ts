/**
 * SRTP key derivation (RFC 3711 §4.3) with the AES-CM PRF (§4.3.3) and a key
 * derivation rate of 0: the session keys are derived once, from the master
 * key and salt, and never again (SDES does not signal a KDR, RFC 4568 §6.3).
 *
 *   key_id = label || r            (r = index DIV kdr = 0, 48 bits)
 *   x      = key_id XOR master_salt
 *   key    = AES-CM(master_key, IV = x * 2^16), truncated to the length
 */
import { createCipheriv } from 'node:crypto';
import { SrtpError } from './srtp-error.js';
import { isSrtpSuiteName, type SrtpKeyingMaterial } from './srtp-suite.js';

/** RFC 3711 §4.3.1 and §4.3.2: the key derivation labels. */
export const SRTP_LABEL = {
  rtpEncryption: 0x00,
  rtpAuthentication: 0x01,
  rtpSalt: 0x02,
  rtcpEncryption: 0x03,
  rtcpAuthentication: 0x04,
  rtcpSalt: 0x05,
} as const;

const MASTER_KEY_LENGTH = 16;
const MASTER_SALT_LENGTH = 14;
const SESSION_KEY_LENGTH = 16;
const SESSION_SALT_LENGTH = 14;
const AUTH_KEY_LENGTH = 20; // RFC 3711 §8.2: n_a = 160 bits for HMAC-SHA1

/** The three session keys of one direction of SRTP or of SRTCP. */
export interface SrtpSessionKeys {
  /** k_e, 16 bytes. */
  encryptionKey: Buffer;
  /** k_s, 14 bytes. */
  salt: Buffer;
  /** k_a, 20 bytes. */
  authKey: Buffer;
}

/** Session keys for SRTP (labels 0, 1, 2) and SRTCP (labels 3, 4, 5). */
export interface SrtpDerivedKeys {
  rtp: SrtpSessionKeys;
  rtcp: SrtpSessionKeys;
}

/** RFC 3711 §4.3.1: one session key of `length` bytes for `label`, with KDR = 0. */
export function deriveSessionKey(
  masterKey: Uint8Array,
  masterSalt: Uint8Array,
  label: number,
  length: number,
): Buffer {
  checkMaster(masterKey, masterSalt);
  const iv = Buffer.alloc(16);
  iv.set(masterSalt, 0); // x * 2^16: the salt fills the top 112 bits
  iv[7] = iv[7]! ^ label; // key_id = label || r (r = 0): the label sits 48 bits above the LSB of x
  // AES-CM keystream = AES-CTR over zeros (§4.1.1), IV incremented as a 128-bit integer
  const cipher = createCipheriv('aes-128-ctr', masterKey, iv);
  return cipher.update(Buffer.alloc(length));
}

/** RFC 3711 §4.3: all six session keys from the master key and salt. */
export function deriveSrtpKeys(masterKey: Uint8Array, masterSalt: Uint8Array): SrtpDerivedKeys {
  const derive = (encryption: number, authentication: number, salt: number): SrtpSessionKeys => ({
    encryptionKey: deriveSessionKey(masterKey, masterSalt, encryption, SESSION_KEY_LENGTH),
    salt: deriveSessionKey(masterKey, masterSalt, salt, SESSION_SALT_LENGTH),
    authKey: deriveSessionKey(masterKey, masterSalt, authentication, AUTH_KEY_LENGTH),
  });
  return {
    rtp: derive(SRTP_LABEL.rtpEncryption, SRTP_LABEL.rtpAuthentication, SRTP_LABEL.rtpSalt),
    rtcp: derive(SRTP_LABEL.rtcpEncryption, SRTP_LABEL.rtcpAuthentication, SRTP_LABEL.rtcpSalt),
  };
}

/** Throws unless the keying material has the lengths its suite asks for. */
export function checkKeyingMaterial(material: SrtpKeyingMaterial): void {
  if (!isSrtpSuiteName(material.suite)) {
    throw new SrtpError('invalid_keying_material', `unsupported SRTP suite ${material.suite}`);
  }
  checkMaster(material.masterKey, material.masterSalt);
}

function checkMaster(masterKey: Uint8Array, masterSalt: Uint8Array): void {
  if (masterKey.length !== MASTER_KEY_LENGTH) {
    throw new SrtpError(
      'invalid_keying_material',
      `SRTP master key must be ${MASTER_KEY_LENGTH} bytes, got ${masterKey.length}`,
    );
  }
  if (masterSalt.length !== MASTER_SALT_LENGTH) {
    throw new SrtpError(
      'invalid_keying_material',
      `SRTP master salt must be ${MASTER_SALT_LENGTH} bytes, got ${masterSalt.length}`,
    );
  }
}
