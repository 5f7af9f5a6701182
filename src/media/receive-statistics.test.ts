import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReceiveStatistics } from './receive-statistics.js';

/** Feeds sequence numbers at a steady 20 ms with matching timestamps. */
function feed(stats: ReceiveStatistics, seqs: number[], start = 0): void {
  seqs.forEach((seq, i) => stats.onPacket(seq & 0xffff, start + i * 20, (seq * 160) >>> 0));
}

describe('ReceiveStatistics (RFC 3550 A.1, A.3, A.8)', () => {
  it('counts a clean stream: nothing lost, no jitter', () => {
    const s = new ReceiveStatistics();
    feed(
      s,
      [...Array(100).keys()].map((i) => 1000 + i),
    );
    expect(s.counters()).toMatchObject({
      packetsReceived: 100,
      packetsLost: 0,
      lossPct: 0,
      packetsOutOfOrder: 0,
      jitterMs: 0,
      expected: 100,
    });
  });

  it('counts losses as expected − received (A.3)', () => {
    const s = new ReceiveStatistics();
    const seqs = [...Array(100).keys()].filter((i) => i % 20 !== 7); // 5 of 100 lost
    feed(s, seqs);
    expect(s.counters()).toMatchObject({ packetsReceived: 95, packetsLost: 5, lossPct: 5 });
  });

  it('extends sequence numbers across the wrap at 65535', () => {
    const s = new ReceiveStatistics();
    const seqs = [...Array(40).keys()].map((i) => 65520 + i).filter((x) => x !== 65535 + 3);
    feed(s, seqs);
    expect(s.extendedHighestSeq).toBe(65520 + 39);
    expect(s.counters()).toMatchObject({ packetsReceived: 39, packetsLost: 1, expected: 40 });
  });

  it('counts reordering without loss, across the wrap too', () => {
    const s = new ReceiveStatistics();
    feed(s, [65533, 65535, 65534, 1, 0]);
    expect(s.lastExtendedSeq).toBe(65536); // the late packet's own number, not the highest
    feed(s, [2, 3]);
    expect(s.counters()).toMatchObject({
      packetsReceived: 7,
      packetsLost: 0,
      packetsOutOfOrder: 2,
    });
  });

  it('drops duplicates, the newest and older ones, without counting them received', () => {
    const s = new ReceiveStatistics();
    expect(s.onPacket(10, 0, 0)).toBe(true);
    expect(s.onPacket(11, 20, 160)).toBe(true);
    expect(s.onPacket(11, 21, 160)).toBe(false);
    expect(s.onPacket(12, 40, 320)).toBe(true);
    expect(s.onPacket(10, 41, 0)).toBe(false);
    expect(s.counters()).toMatchObject({
      packetsReceived: 3,
      packetsLost: 0,
      packetsDuplicated: 2,
      packetsOutOfOrder: 0,
    });
  });

  it('resynchronises after a source restart: two sequential packets far away (A.1)', () => {
    const s = new ReceiveStatistics();
    feed(s, [1, 2, 3]);
    expect(s.onPacket(40000, 100, 0)).toBe(false);
    expect(s.onPacket(40001, 120, 160)).toBe(true);
    expect(s.counters()).toMatchObject({ packetsReceived: 1, packetsLost: 0, expected: 1 });
  });

  it('computes jitter as A.8 does: a packet 10 ms late every other packet', () => {
    const s = new ReceiveStatistics();
    for (let i = 0; i < 400; i++) s.onPacket(i, i * 20 + (i % 2) * 10, i * 160);
    // |D| is 80 units every packet, so J converges to 80 units = 10 ms
    expect(s.counters().jitterMs).toBeCloseTo(10, 1);
  });

  it('computes the A.8 recurrence exactly on a crafted sequence', () => {
    const s = new ReceiveStatistics();
    const arrivals = [0, 20, 45, 60, 80];
    arrivals.forEach((ms, i) => s.onPacket(i, ms, i * 160));
    // D (units): 0, 40, -40, 0 → J: 0, 2.5, 4.84375, 4.541015625
    const j = (((((0 + (40 - 0) / 16) * 15) / 16 + 40 / 16) * 15) / 16) * 1; // = 4.541015625
    expect(s.counters().jitterMs).toBeCloseTo((j * 1000) / 8000, 9);
    expect(j).toBeCloseTo(4.541015625, 9);
  });

  it('reports the interval fraction lost for RTCP (A.3)', () => {
    const s = new ReceiveStatistics();
    feed(
      s,
      [...Array(100).keys()].filter((i) => i % 4 !== 0 || i === 0),
    ); // 24 lost of 100
    const rb = s.reportBlock(0x1234, 0, 0)!;
    expect(rb.fractionLost).toBe(Math.floor((24 * 256) / 100));
    expect(rb.cumulativeLost).toBe(24);
    expect(rb.extendedHighestSeq).toBe(99);
    feed(
      s,
      [...Array(50).keys()].map((i) => 100 + i),
      2000,
    );
    expect(s.reportBlock(0x1234, 0, 0)!.fractionLost).toBe(0);
  });

  it('never counts more lost than expected, whatever the arrival order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 400 }), (seqs) => {
        const s = new ReceiveStatistics();
        feed(s, seqs);
        const c = s.counters();
        expect(c.packetsLost).toBeGreaterThanOrEqual(0);
        expect(c.packetsReceived).toBeLessThanOrEqual(Math.max(c.expected, 0) + 0);
        expect(c.lossPct).toBeGreaterThanOrEqual(0);
        expect(c.lossPct).toBeLessThanOrEqual(100);
      }),
    );
  });
});
