/**
 * RTCP common header (RFC 3550 §6.4.1), shared by every RTCP packet type.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    RC   |      PT       |             length            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * `length` counts 32-bit words minus one, header included.
 */
export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;
export const RTCP_APP = 204;

export interface RtcpHeader {
  padding: boolean;
  /** Reception report count, source count or subtype (5 bits). */
  count: number;
  packetType: number;
  /** Whole packet size in bytes, header included. */
  byteLength: number;
}

export function readRtcpHeader(buf: Uint8Array, offset: number): RtcpHeader | null {
  if (offset + 4 > buf.length) return null;
  const b0 = buf[offset]!;
  if (b0 >> 6 !== 2) return null;
  const byteLength = (((buf[offset + 2]! << 8) | buf[offset + 3]!) + 1) * 4;
  if (offset + byteLength > buf.length) return null;
  return {
    padding: (b0 & 0x20) !== 0,
    count: b0 & 0x1f,
    packetType: buf[offset + 1]!,
    byteLength,
  };
}

export function writeRtcpHeader(
  buf: Uint8Array,
  offset: number,
  count: number,
  packetType: number,
  byteLength: number,
): void {
  const words = byteLength / 4 - 1;
  buf[offset] = 0x80 | (count & 0x1f);
  buf[offset + 1] = packetType;
  buf[offset + 2] = (words >>> 8) & 0xff;
  buf[offset + 3] = words & 0xff;
}

export function readU32(buf: Uint8Array, o: number): number {
  return ((buf[o]! << 24) | (buf[o + 1]! << 16) | (buf[o + 2]! << 8) | buf[o + 3]!) >>> 0;
}

export function writeU32(buf: Uint8Array, o: number, v: number): void {
  buf[o] = v >>> 24;
  buf[o + 1] = (v >>> 16) & 0xff;
  buf[o + 2] = (v >>> 8) & 0xff;
  buf[o + 3] = v & 0xff;
}
