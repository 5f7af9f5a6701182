/**
 * The SRTP crypto suites we speak (RFC 4568 §6.2): both use AES-128 in
 * counter mode (RFC 3711 §4.1.1) and HMAC-SHA1 (§4.2.1) with a 16-byte
 * master key and a 14-byte master salt; they differ only in the RTP tag.
 */
export type SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80' | 'AES_CM_128_HMAC_SHA1_32';

export interface SrtpSuite {
  name: SrtpSuiteName;
  /** Master key length in bytes (RFC 4568 §6.2.1: 128 bits). */
  masterKeyLength: number;
  /** Master salt length in bytes (RFC 4568 §6.2.1: 112 bits). */
  masterSaltLength: number;
  /** Session authentication key length in bytes (RFC 3711 §8.2: n_a = 160). */
  authKeyLength: number;
  /** SRTP authentication tag length in bytes. */
  rtpTagLength: number;
  /** SRTCP authentication tag length in bytes: 80 bits for both (RFC 4568 §6.2.2). */
  rtcpTagLength: number;
}

/** The two suites by their SDP name. */
export const SRTP_SUITES: Readonly<Record<SrtpSuiteName, SrtpSuite>> = {
  AES_CM_128_HMAC_SHA1_80: {
    name: 'AES_CM_128_HMAC_SHA1_80',
    masterKeyLength: 16,
    masterSaltLength: 14,
    authKeyLength: 20,
    rtpTagLength: 10,
    rtcpTagLength: 10,
  },
  AES_CM_128_HMAC_SHA1_32: {
    name: 'AES_CM_128_HMAC_SHA1_32',
    masterKeyLength: 16,
    masterSaltLength: 14,
    authKeyLength: 20,
    rtpTagLength: 4,
    rtcpTagLength: 10,
  },
};

/** True if `name` is a suite we support (names are case-sensitive, RFC 4568 §9.2). */
export function isSrtpSuiteName(name: string): name is SrtpSuiteName {
  return Object.hasOwn(SRTP_SUITES, name);
}

/** Master key, master salt and the suite they are for: what SDES (RFC 4568) hands over. */
export interface SrtpKeyingMaterial {
  suite: SrtpSuiteName;
  /** 16 bytes. */
  masterKey: Uint8Array;
  /** 14 bytes. */
  masterSalt: Uint8Array;
}
