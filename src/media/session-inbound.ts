import type { RemoteInfo } from 'node:dgram';
import type { MediaClock } from './media-clock.js';
import type { PacingClock } from './pacing-clock.js';
import type { RtcpChannel } from './rtcp-channel.js';
import { createRtpHeader, isRtcpInMux, parseRtpPacket } from './rtp-packet.js';
import type { RtpReceiver } from './rtp-receiver.js';
import type { RtpTransmitter } from './rtp-transmitter.js';
import type { NegotiatedMedia } from './sdp-types.js';
import type { SrtpProtection } from './srtp-protection.js';

/** What the receive path reads from its session. */
export interface InboundSession {
  /** The negotiated media; null before the answer. */
  readonly media: Readonly<NegotiatedMedia> | null;
  readonly ssrc: number;
}

export interface InboundParts {
  rx: RtpReceiver;
  tx: RtpTransmitter;
  rtcp: RtcpChannel;
  clock: MediaClock;
  pacing: PacingClock;
  /** An SRTP mode: nothing is taken in before the far end's key is known. */
  srtpMode: boolean;
  /** Symmetric RTP latched on `rinfo` (RFC 4961). */
  onLatched: (n: Readonly<NegotiatedMedia>, rinfo: RemoteInfo) => void;
}

/**
 * A session's receive path, datagram by datagram: RTCP multiplexed on the
 * RTP port (RFC 5761 §4), SRTP/SRTCP checked and decrypted in place (RFC
 * 3711 §3.3, §3.4), the RTP header parsed, the symmetric-RTP latch, then
 * RtpReceiver. What is dropped is counted here; nothing throws.
 */
export class SessionInbound {
  /** Set once SDES agreed keys (RFC 4568); null: plain RTP. */
  srtp: SrtpProtection | null = null;
  /** Datagrams that were not RTP. */
  malformed = 0;
  /** SRTP modes: RTP that came before the far end's key (dropped). */
  packetsBeforeKeys = 0;
  private readonly header = createRtpHeader();

  constructor(
    private readonly session: InboundSession,
    private readonly p: InboundParts,
  ) {}

  readonly onRtpDatagram = (msg: Buffer, rinfo: RemoteInfo): void => {
    const p = this.p;
    const now = p.clock.now();
    p.pacing.poll(now); // see PacingClock.poll: sending is not held up by a batch of I/O
    const n = this.session.media;
    if (n?.rtcpMux && isRtcpInMux(msg)) {
      this.onRtcpDatagram(msg, rinfo);
      return;
    }
    let packet = msg;
    if (this.srtp) {
      // RFC 3711 §3.3: authenticated before anything else looks at it, the latch included
      const plain = this.srtp.unprotectRtp(msg);
      if (plain === null) return;
      packet = plain;
    } else if (p.srtpMode && !n) {
      this.packetsBeforeKeys++; // no far-end key yet: nothing to check it with
      return;
    }
    const h = this.header;
    if (!parseRtpPacket(packet, h)) {
      this.malformed++;
      return;
    }
    if (n) {
      const source = p.tx.accept(rinfo);
      if (source === 'foreign') return;
      if (source === 'latched') p.onLatched(n, rinfo);
    }
    p.rx.onPacket(packet, h, now);
  };

  readonly onRtcpDatagram = (msg: Buffer, rinfo: RemoteInfo): void => {
    if (!this.session.media) return;
    const packet = this.srtp ? this.srtp.unprotectRtcp(msg) : msg; // RFC 3711 §3.4
    if (packet !== null) this.p.rtcp.onDatagram(packet, rinfo, this.session.ssrc);
  };
}
