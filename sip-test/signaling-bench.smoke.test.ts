// Keeps the signaling benchmark from rotting: ~2 s at a low rate.

import { describe, expect, it } from 'vitest';
import { runSignalingBench } from './load/signaling-bench.js';

describe('signaling benchmark (smoke)', () => {
  it('runs one short low-rate step with no failures', async () => {
    const lines: string[] = [];
    const results = await runSignalingBench({ steps: [50], seconds: 2, log: (l) => lines.push(l) });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ rate: 50, offered: 100, completed: 100, failed: 0 });
    expect(results[0]!.p95Ms).toBeLessThan(200);
    expect(lines.at(-1)).toMatch(/^sustained: 50 cps/);
  });
});
