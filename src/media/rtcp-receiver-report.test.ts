import { describe, expect, it } from 'vitest';
import { parseReceiverReport, writeReceiverReport } from './rtcp-receiver-report.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('RTCP receiver report (RFC 3550 §6.4.2)', () => {
  const rrBytes = hex(
    '81 c9 0007' + // V=2 RC=1 PT=201 length=7 (32 bytes)
      '11111111' + // SSRC of packet sender
      '12345678' + // SSRC_1
      '0d 000005' + // fraction lost 13/256 (≈5 %), cumulative lost 5
      '0000ffff' + // extended highest sequence 65535
      '000000a0' + // jitter 160 (20 ms at 8 kHz)
      '00000000 00000000', // no SR received yet
  );
  const rr = {
    type: 'rr' as const,
    ssrc: 0x11111111,
    reports: [
      {
        ssrc: 0x12345678,
        fractionLost: 13,
        cumulativeLost: 5,
        extendedHighestSeq: 65535,
        jitter: 160,
        lastSr: 0,
        delaySinceLastSr: 0,
      },
    ],
  };

  it('parses and writes the byte vector', () => {
    expect(parseReceiverReport(rrBytes, 0)).toEqual(rr);
    const buf = new Uint8Array(32);
    expect(writeReceiverReport(buf, 0, rr)).toBe(32);
    expect(Buffer.from(buf).equals(rrBytes)).toBe(true);
  });

  it('parses an empty RR (RC=0)', () => {
    expect(parseReceiverReport(hex('80c90001 22222222'), 0)).toEqual({
      type: 'rr',
      ssrc: 0x22222222,
      reports: [],
    });
  });

  it('clamps a cumulative loss beyond 24 bits', () => {
    const buf = new Uint8Array(32);
    writeReceiverReport(buf, 0, {
      ...rr,
      reports: [{ ...rr.reports[0]!, cumulativeLost: 1 << 30 }],
    });
    expect(parseReceiverReport(buf, 0)!.reports[0]!.cumulativeLost).toBe(0x7fffff);
  });
});
