// When a failed delivery is tried again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextAttemptAt, retryAfterMs } from './retry-schedule.js';

const HOUR = 3_600_000;
const base = { nowMs: 1_000_000, eventAtMs: 1_000_000, windowMs: 24 * HOUR, baseMs: 5000 };

describe('nextAttemptAt', () => {
  it('doubles from the base with ±20 % jitter, capped at one hour', () => {
    const mid = () => 0.5;
    expect(nextAttemptAt({ ...base, attempts: 1, random: mid })).toBe(base.nowMs + 5000);
    expect(nextAttemptAt({ ...base, attempts: 2, random: mid })).toBe(base.nowMs + 10_000);
    expect(nextAttemptAt({ ...base, attempts: 4, random: mid })).toBe(base.nowMs + 40_000);
    expect(nextAttemptAt({ ...base, attempts: 30, random: mid })).toBe(base.nowMs + HOUR);
    expect(nextAttemptAt({ ...base, attempts: 1, random: () => 0 })).toBe(base.nowMs + 4000);
    expect(nextAttemptAt({ ...base, attempts: 1, random: () => 0.999999 })).toBe(base.nowMs + 6000);
  });

  it('waits as long as Retry-After asks when that is longer (seconds or an HTTP date)', () => {
    const mid = () => 0.5;
    expect(nextAttemptAt({ ...base, attempts: 1, retryAfter: '120', random: mid })).toBe(
      base.nowMs + 120_000,
    );
    expect(nextAttemptAt({ ...base, attempts: 1, retryAfter: '1', random: mid })).toBe(
      base.nowMs + 5000,
    );
    const date = new Date(base.nowMs + 60_000).toUTCString();
    expect(nextAttemptAt({ ...base, attempts: 1, retryAfter: date, random: mid })).toBe(
      base.nowMs + 60_000,
    );
    expect(retryAfterMs('soon', base.nowMs)).toBeUndefined();
  });

  it('gives up once the next attempt would fall past the window from the event', () => {
    const late = { ...base, nowMs: base.eventAtMs + 24 * HOUR - 1000 };
    expect(nextAttemptAt({ ...late, attempts: 1, random: () => 0.5 })).toBeUndefined();
    expect(
      nextAttemptAt({ ...base, attempts: 1, retryAfter: String(25 * 3600), random: () => 0.5 }),
    ).toBeUndefined();
  });

  it('never schedules in the past nor past the window (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 48 * HOUR }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 100_000 }).map(String)),
        (attempts, elapsed, r, retryAfter) => {
          const nowMs = base.eventAtMs + elapsed;
          const at = nextAttemptAt({ ...base, nowMs, attempts, retryAfter, random: () => r });
          if (at === undefined) return;
          expect(at).toBeGreaterThan(nowMs);
          expect(at).toBeLessThanOrEqual(base.eventAtMs + base.windowMs);
        },
      ),
      { seed: 25, numRuns: 500 },
    );
  });
});
