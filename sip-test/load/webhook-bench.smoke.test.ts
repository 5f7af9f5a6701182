// The webhook bench in small (50 initiate-call requests/s for 2 s): every
// accepted call's two events delivered once, signatures valid, none twice.
// The figures are in docs/benchmarks.md.
import { describe, expect, it } from 'vitest';
import { webhookBenchRound } from './webhook-bench.js';

describe('webhook bench', () => {
  it('every accepted call: call.accepted and call.scheduled delivered, verified, once', async () => {
    const r = await webhookBenchRound({ rate: 50, seconds: 2 });
    expect(r.accepted, JSON.stringify(r)).toBeGreaterThan(0);
    expect(r.eventsDelivered).toBe(r.eventsExpected);
    expect(r.unverified).toBe(0);
    expect(r.duplicateIds).toBe(0);
  }, 90_000);
});
