// The runner's CPU windows over processes it does not own: a set of pids
// (the load generators) and the whole machine (/proc/stat).
import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import { cpuWindowOf, machineBusyWindow } from './proc-stats.js';

/** Keeps this thread busy for `ms` of wall time. */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) Math.sqrt(Math.random());
}

describe('cpuWindowOf', () => {
  it('counts the CPU of the processes it was given, as % of one core', () => {
    const window = cpuWindowOf([process.pid]);
    spin(300);
    // one busy thread for the whole window: near 100 % (ticks are 10 ms; the machine is shared)
    expect(window()).toBeGreaterThan(50);
  });

  it('counts a process that is gone (or never was) as nothing', () => {
    const window = cpuWindowOf([2 ** 22 + 1]); // above the kernel's largest pid
    spin(50);
    expect(window()).toBe(0);
  });
});

describe('machineBusyWindow', () => {
  it('sees this process keep a core busy, and never more than every core', () => {
    const window = machineBusyWindow(cpus().length);
    spin(300);
    const busy = window();
    // % of ONE core: a whole core's worth at least (less only by tick rounding), not a
    // fraction of the machine (which one busy core of two would put near 50)
    expect(busy).toBeGreaterThan(70);
    expect(busy).toBeLessThanOrEqual(100 * cpus().length + 1);
  });
});
