// The HTTP burst in small (400 requests/s for 4 s against the started
// daemon): every request answered within the bound, accepted or refused with
// a catalogue code, 0 × 500, Retry-After on every 503, no number accepted
// twice, refusals logged as counts. The 30 s figures are in docs/benchmarks.md.
import { afterAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../test/support/daemon.js';
import { runHttpBurst, startBurstDaemon } from './http-burst.js';

let daemon: Daemon | undefined;
afterAll(async () => {
  await daemon?.stop();
});

describe('HTTP burst', () => {
  it('400 initiate-call requests/s: all answered within 5 s, none 500, no duplicate accepted', async () => {
    daemon = await startBurstDaemon();
    const r = await runHttpBurst(daemon, { rate: 400, seconds: 4, boundMs: 5000 });
    expect(r.unanswered, JSON.stringify(r)).toBe(0);
    expect(r.overBound, JSON.stringify(r)).toBe(0);
    expect(r.serverErrors, JSON.stringify(r)).toBe(0);
    expect(r.unavailableWithoutRetryAfter).toBe(0);
    expect(r.duplicatesAccepted).toBe(0);
    const answered = Object.values(r.byStatus).reduce((a, b) => a + b, 0);
    expect(answered).toBe(r.sent);
    // accepted, refused as a duplicate (409/400), or shed (503): nothing else
    expect(Object.keys(r.byStatus).sort()).toEqual(
      expect.arrayContaining(
        Object.keys(r.byStatus).filter((s) => ['200', '400', '409', '429', '503'].includes(s)),
      ),
    );
    expect(
      Object.keys(r.byStatus).every((s) => ['200', '400', '409', '429', '503'].includes(s)),
      JSON.stringify(r.byStatus),
    ).toBe(true);
    expect(r.byStatus['200'] ?? 0, JSON.stringify(r)).toBeGreaterThan(0);
  }, 60_000);
});
