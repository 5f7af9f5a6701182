/**
 * SRTP and SRTCP packet layouts (RFC 3711 §3.1, §3.4). Pure: no I/O.
 *
 * SRTP: the RTP header (with its CSRCs and header extension) stays in the
 * clear; the payload, RTP padding included, is encrypted; the tag covers the
 * header and the encrypted payload (and the ROC, which is not sent).
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * |V=2|P|X|  CC   |M|     PT      |       sequence number         | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |                           timestamp                           | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |           synchronization source (SSRC) identifier            | |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+ |
 * |            contributing source (CSRC) identifiers             | |
 * |                               ....                            | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |                   RTP extension (OPTIONAL)                    | |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * | |                          payload  ...                         | |
 * | |                               +-------------------------------+ |
 * | |                               | RTP padding   | RTP pad count | |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * | ~                     SRTP MKI (OPTIONAL)                       ~ |
 * | +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * | :                 authentication tag (RECOMMENDED)              : |
 * | +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * +- Encrypted Portion*                     Authenticated Portion ---+
 *
 * SRTCP: the first 8 bytes (common header and sender SSRC) stay in the
 * clear; the rest of the compound packet is encrypted; then come the E flag
 * and the 31-bit SRTCP index, and the tag, which covers everything before it.
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    RC   |   PT=SR or RR   |             length          |
 * |                         SSRC of sender                        |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * | ~                  sender info, report blocks, ...            ~
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |E|                         SRTCP index                         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * ~                     SRTCP MKI (OPTIONAL)                      ~
 * :                     authentication tag                        :
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 * No MKI: SDES without an MKI is all we accept (sdes-crypto-attribute.ts).
 */

/** Fixed RTP header length. */
export const RTP_FIXED_HEADER_LENGTH = 12;
/** RTCP common header plus the sender SSRC: the part of SRTCP not encrypted. */
export const SRTCP_CLEAR_LENGTH = 8;
/** The E flag and SRTCP index word. */
export const SRTCP_INDEX_LENGTH = 4;
/** RFC 3711 §3.4: E = 1, the packet is encrypted. */
export const SRTCP_E_FLAG = 0x80000000;
/** The SRTCP index is 31 bits. */
export const SRTCP_INDEX_MASK = 0x7fffffff;

/**
 * Length of the RTP header in `buf[0, end)`: fixed part, CSRCs and header
 * extension (RFC 3550 §5.1, §5.3.1), where SRTP encryption starts. Returns -1
 * unless it is a version 2 header that fits.
 */
export function rtpHeaderLength(buf: Uint8Array, end: number): number {
  if (end < RTP_FIXED_HEADER_LENGTH) return -1;
  const b0 = buf[0]!;
  if (b0 >> 6 !== 2) return -1;
  let length = RTP_FIXED_HEADER_LENGTH + (b0 & 0x0f) * 4;
  if ((b0 & 0x10) !== 0) {
    if (length + 4 > end) return -1;
    length += 4 + ((buf[length + 2]! << 8) | buf[length + 3]!) * 4;
  }
  return length > end ? -1 : length;
}

/** Big-endian 32-bit unsigned read. */
export function readUint32(buf: Uint8Array, o: number): number {
  return ((buf[o]! << 24) | (buf[o + 1]! << 16) | (buf[o + 2]! << 8) | buf[o + 3]!) >>> 0;
}

/** Big-endian 32-bit write. */
export function writeUint32(buf: Uint8Array, o: number, v: number): void {
  buf[o] = v >>> 24;
  buf[o + 1] = (v >>> 16) & 0xff;
  buf[o + 2] = (v >>> 8) & 0xff;
  buf[o + 3] = v & 0xff;
}
