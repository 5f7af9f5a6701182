import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRtcpCompound, writeRtcpCompound, type RtcpPacket } from './rtcp-compound.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RTCP compound packets (RFC 3550 §6.1, A.2)', () => {
  it('parses RR + SDES + BYE as one datagram', () => {
    const bytes = hex(
      '80c9 0001 11111111' + // RR, no report blocks
        '81ca 0003 11111111 0105 6140622e63 00' + // SDES CNAME "a@b.c"
        '81cb 0001 11111111', // BYE
    );
    expect(parseRtcpCompound(bytes)).toEqual([
      { type: 'rr', ssrc: 0x11111111, reports: [] },
      { type: 'sdes', chunks: [{ ssrc: 0x11111111, items: [{ type: 1, text: 'a@b.c' }] }] },
      { type: 'bye', ssrcs: [0x11111111] },
    ]);
  });

  it('keeps unknown packet types (APP) by type only', () => {
    const bytes = hex('80c90001 11111111' + '80cc0002 11111111 6e616d65');
    expect(parseRtcpCompound(bytes)).toEqual([
      { type: 'rr', ssrc: 0x11111111, reports: [] },
      { type: 'other', packetType: 204 },
    ]);
  });

  it('rejects a compound that does not start with SR or RR, or whose lengths do not add up', () => {
    expect(parseRtcpCompound(hex('81cb0001 11111111'))).toBeNull();
    expect(parseRtcpCompound(hex('80c90001 11111111 81'))).toBeNull();
    expect(parseRtcpCompound(hex('80c90002 11111111'))).toBeNull();
  });

  it('round-trips SR + SDES + BYE', () => {
    const packets: RtcpPacket[] = [
      {
        type: 'sr',
        ssrc: 7,
        ntpSeconds: 1,
        ntpFraction: 2,
        rtpTimestamp: 3,
        packetCount: 4,
        octetCount: 5,
        reports: [
          {
            ssrc: 9,
            fractionLost: 255,
            cumulativeLost: -8388608,
            extendedHighestSeq: 0xffffffff,
            jitter: 1,
            lastSr: 2,
            delaySinceLastSr: 3,
          },
        ],
      },
      { type: 'sdes', chunks: [{ ssrc: 7, items: [{ type: 1, text: 'media@gateway' }] }] },
      { type: 'bye', ssrcs: [7], reason: 'call ended' },
    ];
    const buf = new Uint8Array(256);
    const n = writeRtcpCompound(buf, packets);
    expect(n % 4).toBe(0);
    expect(parseRtcpCompound(buf.subarray(0, n))).toEqual(packets);
  });

  it('never throws on random input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        parseRtcpCompound(bytes);
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (tail) => {
        parseRtcpCompound(Buffer.concat([hex('80c90001 11111111'), tail]));
      }),
    );
  });
});
