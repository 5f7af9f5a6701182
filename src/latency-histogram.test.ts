import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from './latency-histogram.js';

describe('LatencyHistogram', () => {
  it('counts values into the first bucket whose bound is not below them', () => {
    const h = new LatencyHistogram([1, 5, 10]);
    for (const v of [0.5, 1, 3, 7, 50, -2]) h.record(v);
    const s = h.snapshot();
    expect(s.counts).toEqual([3, 1, 1, 1]);
    expect(s.count).toBe(6);
    expect(s.maxMs).toBe(50);
    expect(s.sumMs).toBeCloseTo(61.5);
  });

  it('estimates quantiles by bucket bound, capped at the max', () => {
    const h = new LatencyHistogram([1, 5, 10]);
    expect(h.quantile(0.5)).toBe(0);
    for (let i = 0; i < 98; i += 1) h.record(0.2);
    h.record(4);
    h.record(30);
    expect(h.quantile(0.5)).toBe(1);
    expect(h.quantile(0.99)).toBe(5);
    expect(h.quantile(1)).toBe(30);
  });

  it('ignores non-finite values', () => {
    const h = new LatencyHistogram();
    h.record(Number.NaN);
    expect(h.snapshot().count).toBe(0);
  });
});
