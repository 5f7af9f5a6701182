import { readU32, writeU32 } from './rtcp-header.js';

/**
 * Reception report block (RFC 3550 §6.4.1), 24 bytes, in SR and RR.
 *
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |                 SSRC_1 (SSRC of first source)                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * | fraction lost |       cumulative number of packets lost       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           extended highest sequence number received           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      interarrival jitter                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         last SR (LSR)                         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   delay since last SR (DLSR)                  |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 */
export const REPORT_BLOCK_SIZE = 24;

export interface ReportBlock {
  ssrc: number;
  /** Fixed point, fraction × 256 (0–255). */
  fractionLost: number;
  /** Signed 24-bit: may go negative with duplicates (§6.4.1). */
  cumulativeLost: number;
  extendedHighestSeq: number;
  /** In timestamp units. */
  jitter: number;
  lastSr: number;
  delaySinceLastSr: number;
}

export function readReportBlock(buf: Uint8Array, o: number): ReportBlock {
  let lost = (buf[o + 5]! << 16) | (buf[o + 6]! << 8) | buf[o + 7]!;
  if (lost & 0x800000) lost -= 0x1000000; // sign-extend 24 bits
  return {
    ssrc: readU32(buf, o),
    fractionLost: buf[o + 4]!,
    cumulativeLost: lost,
    extendedHighestSeq: readU32(buf, o + 8),
    jitter: readU32(buf, o + 12),
    lastSr: readU32(buf, o + 16),
    delaySinceLastSr: readU32(buf, o + 20),
  };
}

export function writeReportBlock(buf: Uint8Array, o: number, rb: ReportBlock): number {
  writeU32(buf, o, rb.ssrc);
  const lost = Math.max(-0x800000, Math.min(0x7fffff, rb.cumulativeLost)) & 0xffffff;
  writeU32(buf, o + 4, ((rb.fractionLost & 0xff) << 24) | lost);
  writeU32(buf, o + 8, rb.extendedHighestSeq);
  writeU32(buf, o + 12, rb.jitter);
  writeU32(buf, o + 16, rb.lastSr);
  writeU32(buf, o + 20, rb.delaySinceLastSr);
  return REPORT_BLOCK_SIZE;
}
