/**
 * The session keys of one direction at work: AES-CM encryption (RFC 3711
 * §4.1.1) and HMAC-SHA1 authentication (§4.2.1) of SRTP and SRTCP packets,
 * the ciphers keyed once. Stateless per packet: the index and ROC come from
 * the caller (SrtpSender, SrtpReceiver), which owns the per-SSRC state.
 */
import { AesCmKeystream } from './aes-cm-keystream.js';
import { HmacSha1 } from './hmac-sha1.js';
import { checkKeyingMaterial, deriveSrtpKeys, type SrtpSessionKeys } from './srtp-keys.js';
import { SRTP_SUITES, type SrtpKeyingMaterial } from './srtp-suite.js';

/** Encryption and authentication with one direction's session keys. */
export class SrtpSessionCrypto {
  /** SRTP tag length: 10 or 4 bytes by suite. */
  readonly rtpTagLength: number;
  /** SRTCP tag length: 10 bytes for both suites (RFC 4568 §6.2). */
  readonly rtcpTagLength: number;
  private readonly rtp: KeyedStream;
  private readonly rtcp: KeyedStream;
  private readonly iv = Buffer.alloc(16);
  private readonly tag = Buffer.alloc(20);

  constructor(material: SrtpKeyingMaterial) {
    checkKeyingMaterial(material);
    const suite = SRTP_SUITES[material.suite];
    this.rtpTagLength = suite.rtpTagLength;
    this.rtcpTagLength = suite.rtcpTagLength;
    const keys = deriveSrtpKeys(material.masterKey, material.masterSalt);
    this.rtp = keyedStream(keys.rtp);
    this.rtcp = keyedStream(keys.rtcp);
  }

  /** RFC 3711 §4.1.1: XORs the SRTP keystream for (SSRC, 48-bit index) into buf[start, end). */
  cryptRtp(buf: Uint8Array, start: number, end: number, ssrc: number, index: number): void {
    writeIv(this.iv, this.rtp.salt, ssrc, index);
    this.rtp.cipher.xor(this.iv, buf, start, end);
  }

  /** RFC 3711 §3.4: the same with the SRTCP keys and the 31-bit SRTCP index. */
  cryptRtcp(buf: Uint8Array, start: number, end: number, ssrc: number, index: number): void {
    writeIv(this.iv, this.rtcp.salt, ssrc, index);
    this.rtcp.cipher.xor(this.iv, buf, start, end);
  }

  /** RFC 3711 §4.2: the SRTP tag of buf[0, end) || ROC, written at out[offset]. */
  writeRtpTag(buf: Uint8Array, end: number, roc: number, out: Uint8Array, offset: number): void {
    const mac = this.rtp.mac;
    mac.update(buf, 0, end);
    mac.updateUint32(roc);
    mac.digestInto(out, offset, this.rtpTagLength);
  }

  /** RFC 3711 §3.4: the SRTCP tag of buf[0, end) (E flag and index included), at out[offset]. */
  writeRtcpTag(buf: Uint8Array, end: number, out: Uint8Array, offset: number): void {
    const mac = this.rtcp.mac;
    mac.update(buf, 0, end);
    mac.digestInto(out, offset, this.rtcpTagLength);
  }

  /** True if the tag at buf[end, end + rtpTagLength) authenticates buf[0, end) under `roc`. */
  rtpTagMatches(buf: Uint8Array, end: number, roc: number): boolean {
    this.writeRtpTag(buf, end, roc, this.tag, 0);
    return sameBytes(this.tag, buf, end, this.rtpTagLength);
  }

  /** True if the tag at buf[end, end + rtcpTagLength) authenticates buf[0, end). */
  rtcpTagMatches(buf: Uint8Array, end: number): boolean {
    this.writeRtcpTag(buf, end, this.tag, 0);
    return sameBytes(this.tag, buf, end, this.rtcpTagLength);
  }
}

interface KeyedStream {
  cipher: AesCmKeystream;
  salt: Buffer;
  mac: HmacSha1;
}

function keyedStream(keys: SrtpSessionKeys): KeyedStream {
  return {
    cipher: new AesCmKeystream(keys.encryptionKey),
    salt: keys.salt,
    mac: new HmacSha1(keys.authKey),
  };
}

/** RFC 3711 §4.1.1: IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16). */
function writeIv(iv: Buffer, salt: Buffer, ssrc: number, index: number): void {
  const high = Math.floor(index / 0x100000000); // top 16 bits of the 48-bit index
  const low = index >>> 0;
  iv[0] = salt[0]!;
  iv[1] = salt[1]!;
  iv[2] = salt[2]!;
  iv[3] = salt[3]!;
  iv[4] = salt[4]! ^ (ssrc >>> 24);
  iv[5] = salt[5]! ^ ((ssrc >>> 16) & 0xff);
  iv[6] = salt[6]! ^ ((ssrc >>> 8) & 0xff);
  iv[7] = salt[7]! ^ (ssrc & 0xff);
  iv[8] = salt[8]! ^ ((high >>> 8) & 0xff);
  iv[9] = salt[9]! ^ (high & 0xff);
  iv[10] = salt[10]! ^ (low >>> 24);
  iv[11] = salt[11]! ^ ((low >>> 16) & 0xff);
  iv[12] = salt[12]! ^ ((low >>> 8) & 0xff);
  iv[13] = salt[13]! ^ (low & 0xff);
  iv[14] = 0;
  iv[15] = 0;
}

/** Constant-time comparison of a[0, length) with b[offset, offset + length). */
function sameBytes(a: Uint8Array, b: Uint8Array, offset: number, length: number): boolean {
  let diff = 0;
  for (let i = 0; i < length; i++) diff |= a[i]! ^ b[offset + i]!;
  return diff === 0;
}
