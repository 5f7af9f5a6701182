import { readRtcpHeader, readU32, RTCP_BYE, writeRtcpHeader, writeU32 } from './rtcp-header.js';

/**
 * Goodbye (RFC 3550 §6.6): the SSRCs leaving, then an optional reason
 * (length octet + text), padded to 32 bits.
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    SC   |   PT=BYE=203  |             length            |
 * |                           SSRC/CSRC                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     length    |               reason for leaving            ...
 */
export interface Goodbye {
  type: 'bye';
  ssrcs: number[];
  reason?: string;
}

export function goodbyeSize(bye: Goodbye): number {
  const reasonLen = bye.reason === undefined ? 0 : 1 + Buffer.byteLength(bye.reason, 'utf8');
  return 4 + bye.ssrcs.length * 4 + ((reasonLen + 3) & ~3);
}

export function writeGoodbye(buf: Uint8Array, offset: number, bye: Goodbye): number {
  const size = goodbyeSize(bye);
  writeRtcpHeader(buf, offset, bye.ssrcs.length, RTCP_BYE, size);
  let o = offset + 4;
  for (const ssrc of bye.ssrcs) {
    writeU32(buf, o, ssrc);
    o += 4;
  }
  if (bye.reason !== undefined) {
    const text = Buffer.from(bye.reason, 'utf8').subarray(0, 255);
    buf[o] = text.length;
    buf.set(text, o + 1);
    o += 1 + text.length;
  }
  buf.fill(0, o, offset + size);
  return size;
}

export function parseGoodbye(buf: Uint8Array, offset: number): Goodbye | null {
  const h = readRtcpHeader(buf, offset);
  if (!h || h.packetType !== RTCP_BYE || h.byteLength < 4 + h.count * 4) return null;
  const ssrcs: number[] = [];
  for (let i = 0; i < h.count; i++) ssrcs.push(readU32(buf, offset + 4 + i * 4));
  const bye: Goodbye = { type: 'bye', ssrcs };
  const o = offset + 4 + h.count * 4;
  if (o < offset + h.byteLength) {
    const len = buf[o]!;
    if (o + 1 + len > offset + h.byteLength) return null;
    bye.reason = Buffer.from(buf.buffer, buf.byteOffset + o + 1, len).toString('utf8');
  }
  return bye;
}
