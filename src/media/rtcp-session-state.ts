import { parseRtcpCompound, writeRtcpCompound, type RtcpPacket } from './rtcp-compound.js';
import type { ReceiveStatistics } from './receive-statistics.js';
import type { ReportBlock } from './rtcp-report-block.js';
import { SDES_CNAME } from './rtcp-sdes.js';
import { ntpMiddle32, toNtpTimestamp } from './rtcp-sender-report.js';

/**
 * The RTCP side of one session, without I/O: builds our compound reports
 * (SR when we have sent since the last one, else RR; always SDES CNAME;
 * BYE at the end — RFC 3550 §6.1) and reads the far end's, keeping what
 * they say about our stream (`farEnd`) and the LSR/DLSR data for round-trip
 * time (§6.4.1).
 */
export interface FarEndQuality {
  /** Report blocks about our stream received so far. */
  reports: number;
  /** Loss of the latest report, percent (fraction lost × 100 / 256). */
  lossPct: number;
  /** Worst `lossPct` over the call. */
  worstLossPct: number;
  /** Cumulative packets lost, latest report. */
  packetsLost: number;
  /** Interarrival jitter of the latest report, in milliseconds. */
  jitter: number;
}

export interface SenderInfo {
  ssrc: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export class RtcpSessionState {
  private far: FarEndQuality | null = null;
  /** Middle 32 bits of the last SR's NTP time, and when we got it (ms). */
  private lastSrNtp = 0;
  private lastSrAt = -1;
  private rtt = -1;
  remoteSsrcBye = false;
  reportsReceived = 0;
  malformed = 0;

  constructor(
    private readonly cname: string,
    private readonly clockRate = 8000,
  ) {}

  get farEnd(): FarEndQuality | null {
    return this.far && { ...this.far };
  }

  /** Round-trip time from the far end's last report block, ms (−1 if unknown). */
  get rttMs(): number {
    return this.rtt;
  }

  /** Writes our compound report into `buf`; returns its length. */
  writeReport(
    buf: Uint8Array,
    nowMs: number,
    wallMs: number,
    sender: SenderInfo | null,
    ssrc: number,
    rx: { stats: ReceiveStatistics; ssrc: number } | null,
    bye?: string,
  ): number {
    const reports: ReportBlock[] = [];
    if (rx) {
      const dlsr = this.lastSrAt < 0 ? 0 : Math.round(((nowMs - this.lastSrAt) / 1000) * 65536);
      const block = rx.stats.reportBlock(rx.ssrc, this.lastSrAt < 0 ? 0 : this.lastSrNtp, dlsr);
      if (block) reports.push(block);
    }
    const packets: RtcpPacket[] = [];
    if (sender) {
      const [ntpSeconds, ntpFraction] = toNtpTimestamp(wallMs);
      packets.push({ type: 'sr', ...sender, ntpSeconds, ntpFraction, reports });
    } else {
      packets.push({ type: 'rr', ssrc, reports });
    }
    packets.push({
      type: 'sdes',
      chunks: [{ ssrc, items: [{ type: SDES_CNAME, text: this.cname }] }],
    });
    if (bye !== undefined) packets.push({ type: 'bye', ssrcs: [ssrc], reason: bye });
    return writeRtcpCompound(buf, packets);
  }

  /** Reads a received compound packet. Returns false when it is not valid RTCP. */
  onPacket(buf: Uint8Array, nowMs: number, wallMs: number, ourSsrc: number): boolean {
    const packets = parseRtcpCompound(buf);
    if (!packets) {
      this.malformed++;
      return false;
    }
    this.reportsReceived++;
    for (const p of packets) {
      if (p.type === 'sr') {
        this.lastSrNtp = ntpMiddle32(p.ntpSeconds, p.ntpFraction);
        this.lastSrAt = nowMs;
      }
      if (p.type === 'sr' || p.type === 'rr') {
        for (const rb of p.reports) if (rb.ssrc === ourSsrc) this.onReportBlock(rb, wallMs);
      }
      if (p.type === 'bye') this.remoteSsrcBye = true;
    }
    return true;
  }

  private onReportBlock(rb: ReportBlock, wallMs: number): void {
    const lossPct = (rb.fractionLost * 100) / 256;
    const prev = this.far;
    this.far = {
      reports: (prev?.reports ?? 0) + 1,
      lossPct,
      worstLossPct: Math.max(prev?.worstLossPct ?? 0, lossPct),
      packetsLost: rb.cumulativeLost,
      jitter: (rb.jitter * 1000) / this.clockRate,
    };
    if (rb.lastSr !== 0) {
      // §6.4.1: RTT = A − LSR − DLSR, all in 1/65536 s
      const [s, f] = toNtpTimestamp(wallMs);
      const a = ntpMiddle32(s, f);
      const rtt = (a - rb.lastSr - rb.delaySinceLastSr) >>> 0;
      if (rtt < 65536 * 10) this.rtt = (rtt / 65536) * 1000;
    }
  }
}
