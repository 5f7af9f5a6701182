import { readRtcpHeader, readU32, RTCP_RR, writeRtcpHeader, writeU32 } from './rtcp-header.js';
import {
  readReportBlock,
  REPORT_BLOCK_SIZE,
  writeReportBlock,
  type ReportBlock,
} from './rtcp-report-block.js';

/**
 * Receiver report (RFC 3550 §6.4.2): header, SSRC of packet sender, then
 * `count` report blocks (24 bytes each, see rtcp-report-block.ts).
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    RC   |   PT=RR=201   |             length            |
 * |                     SSRC of packet sender                     |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 */
export interface ReceiverReport {
  type: 'rr';
  ssrc: number;
  reports: ReportBlock[];
}

export function receiverReportSize(rr: ReceiverReport): number {
  return 8 + rr.reports.length * REPORT_BLOCK_SIZE;
}

export function writeReceiverReport(buf: Uint8Array, offset: number, rr: ReceiverReport): number {
  const size = receiverReportSize(rr);
  writeRtcpHeader(buf, offset, rr.reports.length, RTCP_RR, size);
  writeU32(buf, offset + 4, rr.ssrc);
  let o = offset + 8;
  for (const rb of rr.reports) o += writeReportBlock(buf, o, rb);
  return size;
}

export function parseReceiverReport(buf: Uint8Array, offset: number): ReceiverReport | null {
  const h = readRtcpHeader(buf, offset);
  if (!h || h.packetType !== RTCP_RR || h.byteLength < 8 + h.count * REPORT_BLOCK_SIZE) {
    return null;
  }
  const reports: ReportBlock[] = [];
  for (let i = 0; i < h.count; i++) {
    reports.push(readReportBlock(buf, offset + 8 + i * REPORT_BLOCK_SIZE));
  }
  return { type: 'rr', ssrc: readU32(buf, offset + 4), reports };
}
