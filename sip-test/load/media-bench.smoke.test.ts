// The media benchmark in its smallest run (5 sessions, one 2 s repetition,
// no pinning, plain and SRTP): it must start its far ends and the bare relay,
// measure them, stop by itself and print rows with sane figures.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const ARGS = [
  ...['--n', '5', '--seconds', '2', '--warmup', '1', '--reps', '1', '--jit-warmup', '0'],
  '--srtp',
];

/** The row whose first cell is `label`, as cells; checks the figures every row has. */
function checkRow(stdout: string, label: string): string[] {
  const row = stdout.split('\n').find((line) => line.startsWith(`${label} |`));
  expect(row, stdout).toBeDefined();
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
  return cells;
}

describe('media-bench, smallest run', () => {
  it('prints rows per N (plain, SRTP) with our CPU, the relay ratio, packets and spacing', () => {
    const run = spawnSync('npx', ['tsx', 'sip-test/load/media-bench.ts', ...ARGS, '--pin', 'off'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const [, plainCpu] = checkRow(run.stdout, '5');
    const [, srtpCpu] = checkRow(run.stdout, '5 srtp');
    // the SRTP sessions decrypted the echo of what they sent, and the ratio is theirs
    const line = run.stdout.split('\n').find((l) => l.startsWith('srtp/rtp at 5:'));
    const m =
      /ratio ([\d.]+) .*received\/sent rtp ([\d.]+) srtp ([\d.]+); srtp auth failures (\d+)/.exec(
        line ?? '',
      );
    expect(m, run.stdout).not.toBeNull();
    expect(Number(m![1])).toBeCloseTo(Number(srtpCpu) / Number(plainCpu), 1);
    expect(Number(m![2])).toBeGreaterThan(0.9);
    expect(Number(m![3])).toBeGreaterThan(0.9);
    expect(Number(m![4])).toBe(0);
  }, 60_000);
});
