import { describe, expect, it } from 'vitest';
import { parseRtcpCompound, writeRtcpCompound } from './rtcp-compound.js';
import { ReceiveStatistics } from './receive-statistics.js';
import { RtcpSessionState } from './rtcp-session-state.js';
import { ntpMiddle32, toNtpTimestamp } from './rtcp-sender-report.js';

const OURS = 0x11111111;
const THEIRS = 0x22222222;

function rr(fractionLost: number, cumulativeLost: number, jitter: number, lastSr = 0, dlsr = 0) {
  const buf = new Uint8Array(64);
  const n = writeRtcpCompound(buf, [
    {
      type: 'rr',
      ssrc: THEIRS,
      reports: [
        {
          ssrc: OURS,
          fractionLost,
          cumulativeLost,
          extendedHighestSeq: 100,
          jitter,
          lastSr,
          delaySinceLastSr: dlsr,
        },
      ],
    },
  ]);
  return buf.subarray(0, n);
}

describe('RtcpSessionState', () => {
  it('writes SR + SDES with a report block about the far end, and BYE at the end', () => {
    const state = new RtcpSessionState('gw@test');
    const stats = new ReceiveStatistics();
    for (let i = 0; i < 10; i++) if (i !== 4) stats.onPacket(i, i * 20, i * 160);
    const buf = new Uint8Array(512);
    const sender = { ssrc: OURS, rtpTimestamp: 1600, packetCount: 10, octetCount: 1600 };
    const n = state.writeReport(
      buf,
      0,
      1_700_000_000_000,
      sender,
      OURS,
      { stats, ssrc: THEIRS },
      'bye',
    );
    const packets = parseRtcpCompound(buf.subarray(0, n))!;
    expect(packets.map((p) => p.type)).toEqual(['sr', 'sdes', 'bye']);
    const sr = packets[0]!;
    if (sr.type !== 'sr') throw new Error('not an SR');
    expect(sr.packetCount).toBe(10);
    expect(sr.reports[0]).toMatchObject({ ssrc: THEIRS, cumulativeLost: 1, fractionLost: 25 });
  });

  it('writes an RR when we have sent nothing', () => {
    const state = new RtcpSessionState('gw@test');
    const buf = new Uint8Array(512);
    const n = state.writeReport(buf, 0, 0, null, OURS, null);
    expect(parseRtcpCompound(buf.subarray(0, n))!.map((p) => p.type)).toEqual(['rr', 'sdes']);
  });

  it('keeps the far end view of our stream: latest, worst, lost, jitter in ms', () => {
    const state = new RtcpSessionState('gw@test');
    expect(state.farEnd).toBeNull();
    state.onPacket(rr(26, 3, 160), 0, 0, OURS); // 26/256 ≈ 10.2 %
    state.onPacket(rr(0, 3, 80), 5000, 5000, OURS);
    expect(state.farEnd).toEqual({
      reports: 2,
      lossPct: 0,
      worstLossPct: (26 * 100) / 256,
      packetsLost: 3,
      jitter: 10,
    });
    expect(state.onPacket(new Uint8Array([1, 2, 3]), 0, 0, OURS)).toBe(false);
    expect(state.malformed).toBe(1);
  });

  it('computes the round-trip time from LSR and DLSR (RFC 3550 §6.4.1)', () => {
    const state = new RtcpSessionState('gw@test');
    const sentAt = 1_700_000_000_000;
    const [s, f] = toNtpTimestamp(sentAt);
    // the far end held our SR for 250 ms; the RR arrives 300 ms after we sent the SR
    state.onPacket(rr(0, 0, 0, ntpMiddle32(s, f), 0.25 * 65536), 0, sentAt + 300, OURS);
    expect(state.rttMs).toBeGreaterThan(49);
    expect(state.rttMs).toBeLessThan(51);
  });
});
