/**
 * RTP fixed header codec (RFC 3550 §5.1). Pure: no I/O, no timers.
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|X|  CC   |M|     PT      |       sequence number         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           timestamp                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |           synchronization source (SSRC) identifier            |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |            contributing source (CSRC) identifiers             |
 * |                             ....                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * The parser fills a caller-owned object so the receive path allocates
 * nothing per packet.
 */
export const RTP_HEADER_SIZE = 12;

export interface RtpHeader {
  padding: boolean;
  extension: boolean;
  csrcCount: number;
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  /** Offset of the payload: after CSRCs and the header extension. */
  payloadOffset: number;
  /** Payload length, padding removed. */
  payloadLength: number;
}

export function createRtpHeader(): RtpHeader {
  return {
    padding: false,
    extension: false,
    csrcCount: 0,
    marker: false,
    payloadType: 0,
    sequenceNumber: 0,
    timestamp: 0,
    ssrc: 0,
    payloadOffset: RTP_HEADER_SIZE,
    payloadLength: 0,
  };
}

/**
 * Parses `buf` into `out`. Returns false for anything that is not a valid
 * RTP packet (too short, version not 2, lengths that overrun).
 */
export function parseRtpPacket(buf: Uint8Array, out: RtpHeader): boolean {
  const len = buf.length;
  if (len < RTP_HEADER_SIZE) return false;
  const b0 = buf[0]!;
  if (b0 >> 6 !== 2) return false; // §5.1: V=2
  const b1 = buf[1]!;
  const cc = b0 & 0x0f;
  let offset = RTP_HEADER_SIZE + cc * 4;
  if (offset > len) return false;
  const hasExtension = (b0 & 0x10) !== 0;
  if (hasExtension) {
    // §5.3.1: 16-bit profile-defined id, 16-bit length in 32-bit words
    if (offset + 4 > len) return false;
    const words = (buf[offset + 2]! << 8) | buf[offset + 3]!;
    offset += 4 + words * 4;
    if (offset > len) return false;
  }
  let end = len;
  const hasPadding = (b0 & 0x20) !== 0;
  if (hasPadding) {
    // §5.1: the last octet counts the padding octets, itself included
    const pad = buf[len - 1]!;
    if (pad === 0 || offset + pad > len) return false;
    end -= pad;
  }
  out.padding = hasPadding;
  out.extension = hasExtension;
  out.csrcCount = cc;
  out.marker = (b1 & 0x80) !== 0;
  out.payloadType = b1 & 0x7f;
  out.sequenceNumber = (buf[2]! << 8) | buf[3]!;
  out.timestamp = ((buf[4]! << 24) | (buf[5]! << 16) | (buf[6]! << 8) | buf[7]!) >>> 0;
  out.ssrc = ((buf[8]! << 24) | (buf[9]! << 16) | (buf[10]! << 8) | buf[11]!) >>> 0;
  out.payloadOffset = offset;
  out.payloadLength = end - offset;
  return true;
}

/** Writes a 12-byte header (no CSRC, no extension, no padding) at `offset`. */
export function writeRtpHeader(
  buf: Uint8Array,
  offset: number,
  marker: boolean,
  payloadType: number,
  sequenceNumber: number,
  timestamp: number,
  ssrc: number,
): number {
  buf[offset] = 0x80; // V=2, P=0, X=0, CC=0
  buf[offset + 1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  buf[offset + 2] = (sequenceNumber >>> 8) & 0xff;
  buf[offset + 3] = sequenceNumber & 0xff;
  buf[offset + 4] = timestamp >>> 24;
  buf[offset + 5] = (timestamp >>> 16) & 0xff;
  buf[offset + 6] = (timestamp >>> 8) & 0xff;
  buf[offset + 7] = timestamp & 0xff;
  buf[offset + 8] = ssrc >>> 24;
  buf[offset + 9] = (ssrc >>> 16) & 0xff;
  buf[offset + 10] = (ssrc >>> 8) & 0xff;
  buf[offset + 11] = ssrc & 0xff;
  return RTP_HEADER_SIZE;
}

/** RFC 5761 §4: with rtcp-mux, packet types 192–223 in the second octet are RTCP. */
export function isRtcpInMux(buf: Uint8Array): boolean {
  if (buf.length < 2) return false;
  const pt = buf[1]!;
  return pt >= 192 && pt <= 223;
}
