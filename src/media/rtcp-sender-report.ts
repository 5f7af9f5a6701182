import { readRtcpHeader, readU32, RTCP_SR, writeRtcpHeader, writeU32 } from './rtcp-header.js';
import {
  readReportBlock,
  REPORT_BLOCK_SIZE,
  writeReportBlock,
  type ReportBlock,
} from './rtcp-report-block.js';

/**
 * Sender report (RFC 3550 §6.4.1): header, SSRC of sender, 20 bytes of
 * sender info, then `count` report blocks.
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    RC   |   PT=SR=200   |             length            |
 * |                         SSRC of sender                        |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |              NTP timestamp, most significant word             |
 * |             NTP timestamp, least significant word             |
 * |                         RTP timestamp                         |
 * |                     sender's packet count                     |
 * |                      sender's octet count                     |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |                  report blocks (24 bytes each)                |
 */
export interface SenderReport {
  type: 'sr';
  ssrc: number;
  ntpSeconds: number;
  ntpFraction: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
  reports: ReportBlock[];
}

export function senderReportSize(sr: SenderReport): number {
  return 28 + sr.reports.length * REPORT_BLOCK_SIZE;
}

export function writeSenderReport(buf: Uint8Array, offset: number, sr: SenderReport): number {
  const size = senderReportSize(sr);
  writeRtcpHeader(buf, offset, sr.reports.length, RTCP_SR, size);
  writeU32(buf, offset + 4, sr.ssrc);
  writeU32(buf, offset + 8, sr.ntpSeconds);
  writeU32(buf, offset + 12, sr.ntpFraction);
  writeU32(buf, offset + 16, sr.rtpTimestamp);
  writeU32(buf, offset + 20, sr.packetCount);
  writeU32(buf, offset + 24, sr.octetCount);
  let o = offset + 28;
  for (const rb of sr.reports) o += writeReportBlock(buf, o, rb);
  return size;
}

export function parseSenderReport(buf: Uint8Array, offset: number): SenderReport | null {
  const h = readRtcpHeader(buf, offset);
  if (!h || h.packetType !== RTCP_SR || h.byteLength < 28 + h.count * REPORT_BLOCK_SIZE) {
    return null;
  }
  const reports: ReportBlock[] = [];
  for (let i = 0; i < h.count; i++) {
    reports.push(readReportBlock(buf, offset + 28 + i * REPORT_BLOCK_SIZE));
  }
  return {
    type: 'sr',
    ssrc: readU32(buf, offset + 4),
    ntpSeconds: readU32(buf, offset + 8),
    ntpFraction: readU32(buf, offset + 12),
    rtpTimestamp: readU32(buf, offset + 16),
    packetCount: readU32(buf, offset + 20),
    octetCount: readU32(buf, offset + 24),
    reports,
  };
}

/** Seconds between the NTP era (1900) and the Unix epoch (RFC 868). */
const NTP_UNIX_OFFSET = 2_208_988_800;

/** Wall-clock ms → 64-bit NTP timestamp as [seconds, fraction] (§4). */
export function toNtpTimestamp(wallMs: number): [number, number] {
  const seconds = Math.floor(wallMs / 1000);
  const fraction = Math.floor(((wallMs - seconds * 1000) / 1000) * 0x100000000);
  return [(seconds + NTP_UNIX_OFFSET) >>> 0, fraction >>> 0];
}

/** The middle 32 bits of an NTP timestamp, as LSR carries them (§6.4.1). */
export function ntpMiddle32(ntpSeconds: number, ntpFraction: number): number {
  return (((ntpSeconds & 0xffff) << 16) | (ntpFraction >>> 16)) >>> 0;
}
