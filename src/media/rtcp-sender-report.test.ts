import { describe, expect, it } from 'vitest';
import {
  ntpMiddle32,
  parseSenderReport,
  toNtpTimestamp,
  writeSenderReport,
  type SenderReport,
} from './rtcp-sender-report.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const srBytes = hex(
  '81 c8 000c' + // V=2 RC=1 PT=200 length=12 words (52 bytes)
    '12345678' + // SSRC of sender
    'e1b2c3d4 80000000' + // NTP timestamp: seconds, fraction (0.5)
    '00000640' + // RTP timestamp 1600
    '0000000a' + // sender's packet count 10
    '00000640' + // sender's octet count 1600
    'cafebabe' + // report block: SSRC_1
    '40 fffffe' + // fraction lost 64/256, cumulative lost -2
    '0001000a' + // extended highest sequence 65546 (one wrap)
    '00000010' + // jitter 16
    'c3d48000' + // LSR
    '00010000', // DLSR 1 s
);

const sr: SenderReport = {
  type: 'sr',
  ssrc: 0x12345678,
  ntpSeconds: 0xe1b2c3d4,
  ntpFraction: 0x80000000,
  rtpTimestamp: 1600,
  packetCount: 10,
  octetCount: 1600,
  reports: [
    {
      ssrc: 0xcafebabe,
      fractionLost: 64,
      cumulativeLost: -2,
      extendedHighestSeq: 65546,
      jitter: 16,
      lastSr: 0xc3d48000,
      delaySinceLastSr: 65536,
    },
  ],
};

describe('RTCP sender report (RFC 3550 §6.4.1)', () => {
  it('parses the byte vector', () => {
    expect(parseSenderReport(srBytes, 0)).toEqual(sr);
  });

  it('writes the byte vector', () => {
    const buf = new Uint8Array(52);
    expect(writeSenderReport(buf, 0, sr)).toBe(52);
    expect(Buffer.from(buf).equals(srBytes)).toBe(true);
  });

  it('rejects a report count that overruns the length', () => {
    const bad = Buffer.from(srBytes);
    bad[0] = 0x82; // RC=2 but room for one block
    expect(parseSenderReport(bad, 0)).toBeNull();
  });

  it('converts wall time to NTP and takes the middle 32 bits for LSR', () => {
    const [s, f] = toNtpTimestamp(1_000.5 * 1000);
    expect(s).toBe(2_208_988_800 + 1000);
    expect(f).toBe(0x80000000);
    expect(ntpMiddle32(0xe1b2c3d4, 0x80000000)).toBe(0xc3d48000);
  });
});
