// The media benchmark in its smallest run (5 sessions, one 2 s repetition,
// no pinning): it must start its far ends and the bare relay, measure both,
// stop by itself and print a row with sane figures.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ARGS = ['--n', '5', '--seconds', '2', '--warmup', '1', '--reps', '1', '--jit-warmup', '0'];

describe('media-bench, smallest run', () => {
  it('prints one row per N with our CPU, the relay ratio, packets and spacing', () => {
    const run = spawnSync('npx', ['tsx', 'sip-test/load/media-bench.ts', ...ARGS, '--pin', 'off'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const row = run.stdout.split('\n').find((line) => line.startsWith('5 |'));
    expect(row, run.stdout).toBeDefined();
    const cells = row!.split('|').map((c) => c.trim());
    const [, cpu, relay, ratio, packets, sendGap] = cells;

    expect(Number(cpu)).toBeGreaterThan(0);
    expect(Number(relay)).toBeGreaterThan(0);
    const median = Number(ratio!.split(' ')[0]);
    expect(median).toBeCloseTo(Number(cpu) / Number(relay), 1);
    expect(Number(packets)).toBeGreaterThan(0.95);
    expect(Number(packets)).toBeLessThan(1.05);
    const [p50, p99] = sendGap!.split('/').map(Number);
    expect(p50).toBeGreaterThanOrEqual(0);
    expect(p99).toBeGreaterThanOrEqual(p50!);
    expect(p99).toBeLessThan(20);
  }, 60_000);
});
