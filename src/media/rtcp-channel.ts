import type { RemoteInfo, Socket } from 'node:dgram';
import type { MediaClock } from './media-clock.js';
import type { ReceiveStatistics } from './receive-statistics.js';
import { RtcpSessionState, type SenderInfo } from './rtcp-session-state.js';
import type { RtpTransmitter } from './rtp-transmitter.js';
import type { NegotiatedMedia } from './sdp-types.js';

/**
 * A session's RTCP I/O: where reports go (the SDP's RTCP address, the RTP
 * one with rtcp-mux, or the far end's actual source with symmetric RTP),
 * when (RFC 3550 §6.3.1: the interval randomised over [0.5, 1.5] ×), and
 * what came back (`state`: far-end quality, round-trip time).
 */
export class RtcpChannel {
  readonly state: RtcpSessionState;
  sent = 0;
  /** SRTP legs: turns each report into SRTCP (RFC 3711 §3.4) before it is sent. */
  protect: ((packet: Buffer) => Buffer) | null = null;
  private address = '';
  private port = 0;
  private mux = false;
  private nextAt = 0;
  private readonly buf = Buffer.alloc(1500);

  constructor(
    cname: string,
    private readonly socket: Socket,
    private readonly rtp: RtpTransmitter,
    private readonly clock: MediaClock,
    private readonly intervalMs: number,
    private readonly symmetric: boolean,
  ) {
    this.state = new RtcpSessionState(cname);
  }

  /** Points reports at the far end of newly negotiated media (RFC 5761 with rtcp-mux). */
  retarget(n: NegotiatedMedia): void {
    this.mux = n.rtcpMux;
    this.address = n.rtcpMux ? n.remoteAddress : n.remoteRtcpAddress;
    this.port = n.rtcpMux ? n.remotePort : n.remoteRtcpPort;
  }

  /** The first report goes out one randomised interval after media is agreed. */
  start(now: number): void {
    if (this.nextAt === 0) this.nextAt = now + this.interval();
  }

  /** RTP latched to `rinfo`: reports to the SDP's RTCP address follow it to that host. */
  latched(n: NegotiatedMedia, rinfo: RemoteInfo): void {
    if (!n.rtcpMux && this.address === n.remoteRtcpAddress) this.address = rinfo.address;
  }

  /** Whether a report is due at `now` (the next one is then scheduled). */
  due(now: number): boolean {
    if (this.nextAt === 0 || now < this.nextAt) return false;
    this.nextAt = now + this.interval();
    return true;
  }

  /** Sends our compound report (SR or RR, SDES, and BYE when `bye` is given). */
  send(
    sender: SenderInfo | null,
    ssrc: number,
    rx: { stats: ReceiveStatistics; ssrc: number } | null,
    bye?: string,
  ): void {
    const { clock } = this;
    const len = this.state.writeReport(
      this.buf,
      clock.now(),
      clock.wallNow(),
      sender,
      ssrc,
      rx,
      bye,
    );
    const report = this.buf.subarray(0, len);
    // the buffer is reused: what is sent is a copy (SRTCP protection makes one anyway)
    const packet = this.protect ? this.protect(report) : Buffer.from(report);
    if (this.mux) this.rtp.send(packet);
    else this.socket.send(packet, this.port, this.address);
    this.sent++;
  }

  /** A received RTCP datagram; with symmetric RTP, reports then go to its source. */
  onDatagram(msg: Buffer, rinfo: RemoteInfo, ourSsrc: number): void {
    const { clock } = this;
    if (!this.state.onPacket(msg, clock.now(), clock.wallNow(), ourSsrc)) return;
    if (this.symmetric && !this.mux) {
      this.address = rinfo.address;
      this.port = rinfo.port;
    }
  }

  private interval(): number {
    return this.intervalMs * (0.5 + Math.random());
  }
}
