import { readRtcpHeader, readU32, RTCP_SDES, writeRtcpHeader, writeU32 } from './rtcp-header.js';

/**
 * Source description (RFC 3550 §6.5): chunks of SSRC + items, each item
 * type (8 bits), length (8 bits), text; a chunk's item list ends with a
 * zero octet and is padded to a 32-bit boundary.
 *
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |V=2|P|    SC   |  PT=SDES=202  |             length            |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
 * |                          SSRC/CSRC_1                          |
 * |    CNAME=1    |     length    | user and domain name        ...
 */
export const SDES_CNAME = 1;

export interface SdesItem {
  type: number;
  text: string;
}

export interface SdesChunk {
  ssrc: number;
  items: SdesItem[];
}

export interface SourceDescription {
  type: 'sdes';
  chunks: SdesChunk[];
}

function chunkSize(chunk: SdesChunk): number {
  let n = 4;
  for (const item of chunk.items) n += 2 + Buffer.byteLength(item.text, 'utf8');
  return (n + 1 + 3) & ~3; // null item terminator, then pad to 32 bits
}

export function sourceDescriptionSize(sdes: SourceDescription): number {
  return 4 + sdes.chunks.reduce((n, c) => n + chunkSize(c), 0);
}

export function writeSourceDescription(
  buf: Uint8Array,
  offset: number,
  sdes: SourceDescription,
): number {
  const size = sourceDescriptionSize(sdes);
  writeRtcpHeader(buf, offset, sdes.chunks.length, RTCP_SDES, size);
  let o = offset + 4;
  for (const chunk of sdes.chunks) {
    const end = o + chunkSize(chunk);
    writeU32(buf, o, chunk.ssrc);
    o += 4;
    for (const item of chunk.items) {
      const text = Buffer.from(item.text, 'utf8').subarray(0, 255);
      buf[o] = item.type;
      buf[o + 1] = text.length;
      buf.set(text, o + 2);
      o += 2 + text.length;
    }
    buf.fill(0, o, end); // terminator and padding
    o = end;
  }
  return size;
}

export function parseSourceDescription(buf: Uint8Array, offset: number): SourceDescription | null {
  const h = readRtcpHeader(buf, offset);
  if (!h || h.packetType !== RTCP_SDES) return null;
  const end = offset + h.byteLength;
  const chunks: SdesChunk[] = [];
  let o = offset + 4;
  for (let i = 0; i < h.count; i++) {
    if (o + 4 > end) return null;
    const chunk: SdesChunk = { ssrc: readU32(buf, o), items: [] };
    o += 4;
    for (;;) {
      if (o >= end) return null;
      const type = buf[o]!;
      if (type === 0) break;
      if (o + 2 > end) return null;
      const len = buf[o + 1]!;
      if (o + 2 + len > end) return null;
      chunk.items.push({
        type,
        text: Buffer.from(buf.buffer, buf.byteOffset + o + 2, len).toString('utf8'),
      });
      o += 2 + len;
    }
    o = offset + ((o + 1 - offset + 3) & ~3); // skip the terminator, align to 32 bits
    chunks.push(chunk);
  }
  return { type: 'sdes', chunks };
}
