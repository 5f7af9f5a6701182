import { goodbyeSize, parseGoodbye, writeGoodbye, type Goodbye } from './rtcp-bye.js';
import { readRtcpHeader, RTCP_BYE, RTCP_RR, RTCP_SDES, RTCP_SR } from './rtcp-header.js';
import {
  parseReceiverReport,
  receiverReportSize,
  writeReceiverReport,
  type ReceiverReport,
} from './rtcp-receiver-report.js';
import {
  parseSenderReport,
  senderReportSize,
  writeSenderReport,
  type SenderReport,
} from './rtcp-sender-report.js';
import {
  parseSourceDescription,
  sourceDescriptionSize,
  writeSourceDescription,
  type SourceDescription,
} from './rtcp-sdes.js';

/** Packet types other than SR, RR, SDES and BYE are kept only by type. */
export interface OtherRtcpPacket {
  type: 'other';
  packetType: number;
}

export type RtcpPacket = SenderReport | ReceiverReport | SourceDescription | Goodbye;

/**
 * Parses a compound RTCP packet (RFC 3550 §6.1). Validity as in appendix
 * A.2: version 2 throughout, the first packet an SR or RR without padding,
 * and the lengths adding up to the datagram size. Returns null otherwise.
 */
export function parseRtcpCompound(buf: Uint8Array): (RtcpPacket | OtherRtcpPacket)[] | null {
  const first = readRtcpHeader(buf, 0);
  if (!first || first.padding) return null;
  if (first.packetType !== RTCP_SR && first.packetType !== RTCP_RR) return null;
  const packets: (RtcpPacket | OtherRtcpPacket)[] = [];
  let o = 0;
  while (o < buf.length) {
    const h = readRtcpHeader(buf, o);
    if (!h) return null;
    let p: RtcpPacket | OtherRtcpPacket | null;
    switch (h.packetType) {
      case RTCP_SR:
        p = parseSenderReport(buf, o);
        break;
      case RTCP_RR:
        p = parseReceiverReport(buf, o);
        break;
      case RTCP_SDES:
        p = parseSourceDescription(buf, o);
        break;
      case RTCP_BYE:
        p = parseGoodbye(buf, o);
        break;
      default:
        p = { type: 'other', packetType: h.packetType };
    }
    if (!p) return null;
    packets.push(p);
    o += h.byteLength;
  }
  return packets;
}

export function rtcpPacketSize(p: RtcpPacket): number {
  switch (p.type) {
    case 'sr':
      return senderReportSize(p);
    case 'rr':
      return receiverReportSize(p);
    case 'sdes':
      return sourceDescriptionSize(p);
    case 'bye':
      return goodbyeSize(p);
  }
}

/** Serializes packets back to back into `buf`; returns the bytes written. */
export function writeRtcpCompound(buf: Uint8Array, packets: readonly RtcpPacket[]): number {
  let o = 0;
  for (const p of packets) {
    switch (p.type) {
      case 'sr':
        o += writeSenderReport(buf, o, p);
        break;
      case 'rr':
        o += writeReceiverReport(buf, o, p);
        break;
      case 'sdes':
        o += writeSourceDescription(buf, o, p);
        break;
      case 'bye':
        o += writeGoodbye(buf, o, p);
        break;
    }
  }
  return o;
}
