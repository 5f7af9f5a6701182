import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRtpHeader,
  isRtcpInMux,
  parseRtpPacket,
  RTP_HEADER_SIZE,
  writeRtpHeader,
} from './rtp-packet.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RTP packet (RFC 3550 §5.1)', () => {
  it('parses a PCMA packet from the SIPp g711a.pcap', () => {
    const buf = hex(
      '80' + // V=2 P=0 X=0 CC=0
        '08' + // M=0 PT=8 (PCMA)
        'e6fe' + // sequence number 59134
        '000001e0' + // timestamp 480
        'dee0ee8f' + // SSRC
        'd5d5d5d5', // payload
    );
    const h = createRtpHeader();
    expect(parseRtpPacket(buf, h)).toBe(true);
    expect(h).toMatchObject({
      marker: false,
      payloadType: 8,
      sequenceNumber: 59134,
      timestamp: 480,
      ssrc: 0xdee0ee8f,
      payloadOffset: 12,
      payloadLength: 4,
    });
  });

  it('parses the marker bit and an RFC 4733 payload type', () => {
    const buf = hex('80e5 1f30 000033e0 0e05384e 010a0000');
    const h = createRtpHeader();
    expect(parseRtpPacket(buf, h)).toBe(true);
    expect(h.marker).toBe(true);
    expect(h.payloadType).toBe(101);
    expect(h.payloadLength).toBe(4);
  });

  it('skips CSRCs and the header extension, strips padding', () => {
    const buf = hex(
      'b1' + // V=2 P=1 X=1 CC=1
        '00 0001 00000002 00000003' +
        '00000004' + // CSRC
        'bede 0001 11223344' + // extension: id, 1 word
        'aabb' + // payload
        '0002', // padding: 2 octets, last one counts
    );
    const h = createRtpHeader();
    expect(parseRtpPacket(buf, h)).toBe(true);
    expect(h.csrcCount).toBe(1);
    expect(h.payloadOffset).toBe(12 + 4 + 8);
    expect(h.payloadLength).toBe(2);
  });

  it('rejects short packets, wrong version and overrunning lengths', () => {
    const h = createRtpHeader();
    expect(parseRtpPacket(hex('8000'), h)).toBe(false);
    expect(parseRtpPacket(hex('40000001000000000000000'.padEnd(24, '0')), h)).toBe(false);
    expect(parseRtpPacket(hex('8f00 0001 00000000 00000000'), h)).toBe(false); // CC=15, no CSRCs
    expect(parseRtpPacket(hex('a000 0001 00000000 00000000 00ff'), h)).toBe(false); // padding > len
    expect(parseRtpPacket(hex('9000 0001 00000000 00000000 bede0005'), h)).toBe(false);
  });

  it('writes the header byte for byte', () => {
    const buf = new Uint8Array(12);
    expect(writeRtpHeader(buf, 0, true, 0, 0xfffe, 0xdeadbeef, 0x01020304)).toBe(12);
    expect(Buffer.from(buf).toString('hex')).toBe('8080fffedeadbeef01020304');
  });

  it('round-trips arbitrary header fields', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.integer({ min: 0, max: 127 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.uint8Array({ maxLength: 200 }),
        (m, pt, seq, ts, ssrc, payload) => {
          const buf = new Uint8Array(RTP_HEADER_SIZE + payload.length);
          writeRtpHeader(buf, 0, m, pt, seq, ts, ssrc);
          buf.set(payload, RTP_HEADER_SIZE);
          const h = createRtpHeader();
          expect(parseRtpPacket(buf, h)).toBe(true);
          expect([h.marker, h.payloadType, h.sequenceNumber, h.timestamp, h.ssrc]).toEqual([
            m,
            pt,
            seq,
            ts,
            ssrc,
          ]);
          expect(h.payloadLength).toBe(payload.length);
        },
      ),
    );
  });

  it('never throws on random input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        parseRtpPacket(bytes, createRtpHeader());
      }),
    );
  });

  it('tells RTCP from RTP on a muxed port (RFC 5761 §4)', () => {
    expect(isRtcpInMux(hex('80c8'))).toBe(true); // SR
    expect(isRtcpInMux(hex('81c9'))).toBe(true); // RR
    expect(isRtcpInMux(hex('8000'))).toBe(false);
    expect(isRtcpInMux(hex('80e5'))).toBe(false); // PT 101 with marker
  });
});
