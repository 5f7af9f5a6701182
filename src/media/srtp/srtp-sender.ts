/**
 * The sending side of an SRTP session (RFC 3711 §3.3): protects our RTP and
 * RTCP packets with our keys. Keeps per SSRC the highest packet index sent
 * (its ROC and sequence number) and the next SRTCP index.
 */
import { estimateSrtpIndex, rocOf } from './srtp-index.js';
import { SrtpError } from './srtp-error.js';
import {
  readUint32,
  rtpHeaderLength,
  SRTCP_CLEAR_LENGTH,
  SRTCP_E_FLAG,
  SRTCP_INDEX_LENGTH,
  SRTCP_INDEX_MASK,
  writeUint32,
} from './srtp-packet.js';
import { SrtpSessionCrypto } from './srtp-session-crypto.js';
import type { SrtpKeyingMaterial } from './srtp-suite.js';

/** Protects outgoing RTP and RTCP with one set of SDES keys. */
export class SrtpSender {
  private readonly crypto: SrtpSessionCrypto;
  /** Highest SRTP index sent, per SSRC. */
  private readonly highest = new Map<number, number>();
  /** Next SRTCP index, per SSRC. */
  private readonly srtcpIndex = new Map<number, number>();

  constructor(material: SrtpKeyingMaterial) {
    this.crypto = new SrtpSessionCrypto(material);
  }

  /**
   * RFC 3711 §3.3: an SRTP packet (a new buffer: header, encrypted payload,
   * tag) from an RTP packet. Throws SrtpError 'malformed_packet' if `packet`
   * is not RTP version 2.
   */
  protectRtp(packet: Buffer): Buffer {
    const length = packet.length;
    const headerLength = rtpHeaderLength(packet, length);
    if (headerLength < 0) throw new SrtpError('malformed_packet', 'not an RTP packet');
    const ssrc = readUint32(packet, 8);
    const seq = (packet[2]! << 8) | packet[3]!;
    const highest = this.highest.get(ssrc) ?? -1;
    // §3.3.1: the sender counts SEQ wraps in its ROC. Estimated as the receiver
    // will (Appendix A), so both agree on the index of every packet sent.
    let index = estimateSrtpIndex(highest, seq);
    if (index > highest) this.highest.set(ssrc, index);
    // A jump back past the start of the stream: sent with ROC 0 and not
    // recorded; the receiver drops it as too old, and both stay in step.
    else if (index < 0) index = seq;
    const out = Buffer.allocUnsafe(length + this.crypto.rtpTagLength);
    packet.copy(out, 0, 0, length);
    this.crypto.cryptRtp(out, headerLength, length, ssrc, index);
    this.crypto.writeRtpTag(out, length, rocOf(index), out, length);
    return out;
  }

  /** §3.3.1: the ROC used for this SSRC's latest packets; undefined before its first. */
  rolloverCounter(ssrc: number): number | undefined {
    const highest = this.highest.get(ssrc);
    return highest === undefined ? undefined : rocOf(highest);
  }

  /**
   * RFC 3711 §3.4: an SRTCP packet (a new buffer: first 8 bytes in the clear,
   * the rest encrypted, E flag and SRTCP index, tag) from an RTCP compound
   * packet. Throws SrtpError 'malformed_packet' if it is not RTCP version 2.
   */
  protectRtcp(packet: Buffer): Buffer {
    const length = packet.length;
    if (length < SRTCP_CLEAR_LENGTH || packet[0]! >> 6 !== 2) {
      throw new SrtpError('malformed_packet', 'not an RTCP packet');
    }
    const ssrc = readUint32(packet, 4);
    // §3.4: the SRTCP index starts at 0 and counts packets sent, modulo 2^31
    const index = this.srtcpIndex.get(ssrc) ?? 0;
    this.srtcpIndex.set(ssrc, (index + 1) & SRTCP_INDEX_MASK);
    const end = length + SRTCP_INDEX_LENGTH;
    const out = Buffer.allocUnsafe(end + this.crypto.rtcpTagLength);
    packet.copy(out, 0, 0, length);
    this.crypto.cryptRtcp(out, SRTCP_CLEAR_LENGTH, length, ssrc, index);
    writeUint32(out, length, (SRTCP_E_FLAG | index) >>> 0);
    this.crypto.writeRtcpTag(out, end, out, end);
    return out;
  }
}
