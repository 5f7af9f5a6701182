/**
 * The receiving side of an SRTP session (RFC 3711 §3.3): checks and decrypts
 * the far end's SRTP and SRTCP. Per SSRC it keeps the highest index accepted
 * (ROC and s_l) and a replay window, for SRTP and SRTCP apart. State changes
 * only after a packet authenticates (§3.3.1), so forged, replayed or
 * wrong-keyed packets leave it as it was; state for a new SSRC is created by
 * its first authentic packet only.
 *
 * A packet that is not accepted is never thrown: unprotect returns why it
 * was dropped, for the caller to count.
 */
import { estimateSrtpIndex, rocOf } from './srtp-index.js';
import {
  readUint32,
  rtpHeaderLength,
  RTP_FIXED_HEADER_LENGTH,
  SRTCP_CLEAR_LENGTH,
  SRTCP_INDEX_LENGTH,
  SRTCP_INDEX_MASK,
} from './srtp-packet.js';
import { ReplayWindow } from './srtp-replay-window.js';
import { SrtpSessionCrypto } from './srtp-session-crypto.js';
import type { SrtpKeyingMaterial } from './srtp-suite.js';

/** Why a packet was dropped. */
export type SrtpDrop = 'auth_failed' | 'replayed' | 'too_old' | 'malformed';

/** True if unprotect dropped the packet. */
export function isSrtpDrop(result: Buffer | SrtpDrop): result is SrtpDrop {
  return typeof result === 'string';
}

/** Authenticates and decrypts incoming SRTP and SRTCP with the far end's SDES keys. */
export class SrtpReceiver {
  private readonly crypto: SrtpSessionCrypto;
  private readonly rtpWindows = new Map<number, ReplayWindow>();
  private readonly rtcpWindows = new Map<number, ReplayWindow>();

  constructor(material: SrtpKeyingMaterial) {
    this.crypto = new SrtpSessionCrypto(material);
  }

  /**
   * RFC 3711 §3.3: the RTP packet inside an SRTP packet, or why it was
   * dropped. Decrypts in place: on success `packet` holds the plaintext and
   * the result is a view of it without the tag; on a drop it is untouched.
   */
  unprotectRtp(packet: Buffer): Buffer | SrtpDrop {
    const end = packet.length - this.crypto.rtpTagLength;
    if (end < RTP_FIXED_HEADER_LENGTH) return 'malformed';
    const headerLength = rtpHeaderLength(packet, end);
    if (headerLength < 0) return 'malformed';
    const ssrc = readUint32(packet, 8);
    const seq = (packet[2]! << 8) | packet[3]!;
    const window = this.rtpWindows.get(ssrc);
    // §3.3.1, Appendix A: estimate the index from the highest accepted
    const index = estimateSrtpIndex(window?.highest ?? -1, seq);
    if (index < 0) return 'too_old';
    // §3.3.2: replay check before spending the HMAC
    if (window !== undefined) {
      const verdict = window.check(index);
      if (verdict !== 'ok') return verdict;
    }
    // §4.2: the tag covers the header, the encrypted payload and the estimated ROC
    if (!this.crypto.rtpTagMatches(packet, end, rocOf(index))) return 'auth_failed';
    this.crypto.cryptRtp(packet, headerLength, end, ssrc, index);
    // §3.3.1: ROC, s_l and the replay list move only now
    this.windowFor(this.rtpWindows, ssrc, window).accept(index);
    return packet.subarray(0, end);
  }

  /**
   * RFC 3711 §3.4: the RTCP compound packet inside an SRTCP packet, or why it
   * was dropped. Decrypts in place, as unprotectRtp. A packet with E = 0 is
   * authenticated and returned as sent (the sender chose not to encrypt it).
   */
  unprotectRtcp(packet: Buffer): Buffer | SrtpDrop {
    const end = packet.length - this.crypto.rtcpTagLength;
    const indexAt = end - SRTCP_INDEX_LENGTH;
    if (indexAt < SRTCP_CLEAR_LENGTH || packet[0]! >> 6 !== 2) return 'malformed';
    const word = readUint32(packet, indexAt);
    const encrypted = word >= 0x80000000; // the E flag
    const index = word & SRTCP_INDEX_MASK;
    const ssrc = readUint32(packet, 4);
    const window = this.rtcpWindows.get(ssrc);
    // §3.4: SRTCP replay protection on the explicit index
    if (window !== undefined) {
      const verdict = window.check(index);
      if (verdict !== 'ok') return verdict;
    }
    if (!this.crypto.rtcpTagMatches(packet, end)) return 'auth_failed';
    if (encrypted) this.crypto.cryptRtcp(packet, SRTCP_CLEAR_LENGTH, indexAt, ssrc, index);
    this.windowFor(this.rtcpWindows, ssrc, window).accept(index);
    return packet.subarray(0, indexAt);
  }

  /** §3.3.1: the ROC of this SSRC's highest authentic packet; undefined before its first. */
  rolloverCounter(ssrc: number): number | undefined {
    const window = this.rtpWindows.get(ssrc);
    return window === undefined ? undefined : rocOf(window.highest);
  }

  private windowFor(
    windows: Map<number, ReplayWindow>,
    ssrc: number,
    window: ReplayWindow | undefined,
  ): ReplayWindow {
    if (window !== undefined) return window;
    const created = new ReplayWindow();
    windows.set(ssrc, created);
    return created;
  }
}
