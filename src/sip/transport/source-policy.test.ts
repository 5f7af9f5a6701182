// Issue 23: who the edge trusts, and the pike-style token bucket of strangers.
import { describe, expect, it } from 'vitest';
import { FakeClock } from './fake-clock.js';
import { SourcePolicy } from './source-policy.js';

describe('trusted sources', () => {
  it('trunk addresses and the CIDR allow-list (IPv4, IPv6, v4-mapped) are known, nothing else', () => {
    const p = new SourcePolicy(new FakeClock(), {
      allowedSources: ['10.1.0.0/16', '2001:db8::/32', '192.0.2.7'],
    });
    p.setTrunkAddresses(['198.51.100.1', '::ffff:203.0.113.5', 'not-an-ip']);
    for (const ip of [
      '198.51.100.1',
      '203.0.113.5',
      '::ffff:198.51.100.1',
      '10.1.255.3',
      '2001:db8:1::9',
      '192.0.2.7',
    ])
      expect(p.isKnown(ip), ip).toBe(true);
    for (const ip of ['198.51.100.2', '10.2.0.1', '2001:db9::1', '192.0.2.8', 'x'])
      expect(p.isKnown(ip), ip).toBe(false);
    expect(p.trusted()).toEqual({ trunkAddresses: 2, allowListEntries: 3 });
    p.setTrunkAddresses([]);
    expect(p.isKnown('198.51.100.1')).toBe(false);
  });

  it('an allow-list entry that is not an IP or CIDR is refused, naming it', () => {
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8/8', '10.0.0.0/x', '::/129'])
      expect(() => new SourcePolicy(new FakeClock(), { allowedSources: [bad] }), bad).toThrow(
        `allowed source "${bad}"`,
      );
  });
});

describe('per-source rate limit (token bucket, then silence)', () => {
  const policy = (clock: FakeClock) =>
    new SourcePolicy(clock, { strangers: 'reject', rateLimit: { perSecond: 5, blockMs: 1000 } });

  it('a burst of perSecond passes, the next one silences the IP for blockMs, then it may talk again', () => {
    const clock = new FakeClock();
    const p = policy(clock);
    const passed = Array.from({ length: 8 }, () => p.charge('192.0.2.1'));
    expect(passed).toEqual([true, true, true, true, true, false, false, false]);
    expect(p.silencings).toBe(1);
    expect(p.charge('192.0.2.2')).toBe(true); // another IP has its own bucket
    clock.advance(999);
    expect(p.charge('192.0.2.1')).toBe(false); // silenced, not refilled meanwhile
    clock.advance(1);
    expect(p.charge('192.0.2.1')).toBe(true);
  });

  it('a steady rate under the limit is never silenced', () => {
    const clock = new FakeClock();
    const p = policy(clock);
    for (let i = 0; i < 100; i++) {
      expect(p.charge('192.0.2.1')).toBe(true);
      clock.advance(250); // 4/s against 5/s
    }
    expect(p.silencings).toBe(0);
  });

  it('rate 0 is off', () => {
    const p = new SourcePolicy(new FakeClock(), { rateLimit: { perSecond: 0, blockMs: 1000 } });
    for (let i = 0; i < 1000; i++) expect(p.charge('192.0.2.1')).toBe(true);
    expect(p.trackedSources).toBe(0);
  });

  it('tracks a bounded number of IPs under a spoofed flood', () => {
    const clock = new FakeClock();
    const p = new SourcePolicy(clock, {
      rateLimit: { perSecond: 5, blockMs: 1000 },
      maxTrackedSources: 1000,
    });
    for (let i = 0; i < 20_000; i++) {
      p.charge(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      if (i % 100 === 0) clock.advance(1);
    }
    expect(p.trackedSources).toBeLessThanOrEqual(1000);
  });

  it('malformed requests: answered for trusted sources, charged for strangers, never with drop', () => {
    const clock = new FakeClock();
    const reject = policy(clock);
    reject.setTrunkAddresses(['198.51.100.1']);
    expect(Array.from({ length: 10 }, () => reject.answerMalformed('198.51.100.1'))).toEqual(
      new Array(10).fill(true),
    );
    const stranger = Array.from({ length: 10 }, () => reject.answerMalformed('192.0.2.1'));
    expect(stranger.filter(Boolean)).toHaveLength(5);
    const drop = new SourcePolicy(clock, { strangers: 'drop' });
    expect(drop.answerMalformed('192.0.2.1')).toBe(false);
    const serve = new SourcePolicy(clock);
    expect(serve.answerMalformed('192.0.2.1')).toBe(true);
  });
});
