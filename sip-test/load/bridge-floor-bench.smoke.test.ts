// The bridge floor benchmark in its smallest run (5 calls, one 2 s
// repetition): it must start its far ends (SIPp's RTP echo, the stamp agent)
// and the bridge, carry audio round the loop (RTP → SIPp → RTP → JSON →
// agent → JSON → RTP), measure, stop by itself and print a row with sane
// figures.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ARGS = ['--n', '5', '--seconds', '2', '--warmup', '1', '--reps', '1'];

describe('bridge-floor-bench, smallest run', () => {
  it('prints the row for 5 calls: CPU per call and the frames carried each way', () => {
    const run = spawnSync('npx', ['tsx', 'sip-test/load/bridge-floor-bench.ts', ...ARGS], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const row = run.stdout.split('\n').find((line) => /^\s+5\s/.test(line));
    expect(row, run.stdout).toBeDefined();
    const [n, perCall, run1, toAgent, toCallee] = row!.trim().split(/\s+/).map(Number);
    expect(n).toBe(5);
    expect(perCall).toBeGreaterThan(0);
    expect(run1).toBe(perCall); // one run: its median is itself
    // 50 frames a second per call, each way: SIPp echoed (nearly) every packet
    // sent, and the agent's echo of it was sent on as RTP in the next ticks
    expect(toAgent).toBeGreaterThan(0.9);
    expect(toAgent).toBeLessThan(1.1);
    expect(toCallee).toBeGreaterThan(0.9);
    expect(toCallee).toBeLessThan(1.1);
  }, 60_000);
});
