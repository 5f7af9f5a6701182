import { describe, expect, it } from 'vitest';
import { parseSourceDescription, SDES_CNAME, writeSourceDescription } from './rtcp-sdes.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RTCP SDES (RFC 3550 §6.5)', () => {
  const bytes = hex(
    '81 ca 0003' + // V=2 SC=1 PT=202 length=3 (16 bytes)
      '12345678' + // SSRC
      '01 05 6140622e63' + // CNAME, 5 octets, "a@b.c"
      '00', // end of list, already 32-bit aligned
  );
  const sdes = {
    type: 'sdes' as const,
    chunks: [{ ssrc: 0x12345678, items: [{ type: SDES_CNAME, text: 'a@b.c' }] }],
  };

  it('parses and writes the byte vector', () => {
    expect(parseSourceDescription(bytes, 0)).toEqual(sdes);
    const buf = new Uint8Array(16);
    expect(writeSourceDescription(buf, 0, sdes)).toBe(16);
    expect(Buffer.from(buf).equals(bytes)).toBe(true);
  });

  it('pads chunks to 32 bits and round-trips two chunks', () => {
    const two = {
      type: 'sdes' as const,
      chunks: [
        { ssrc: 1, items: [{ type: SDES_CNAME, text: 'x' }] }, // 4+3+1 → 8
        { ssrc: 2, items: [{ type: SDES_CNAME, text: 'gateway@host' }] }, // 4+14+1 → 20
      ],
    };
    const buf = new Uint8Array(64);
    const n = writeSourceDescription(buf, 0, two);
    expect(n).toBe(4 + 8 + 20);
    expect(parseSourceDescription(buf.subarray(0, n), 0)).toEqual(two);
  });

  it('rejects an item that overruns the packet', () => {
    expect(parseSourceDescription(hex('81ca0002 12345678 01ff6162'), 0)).toBeNull();
  });
});
