// The load runner in its smallest mode (a few calls, < 30 s): it must start
// everything, place and bridge calls, measure, stop by itself and write a
// report with sane figures.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('npm run load -- --smoke', () => {
  it('writes a report with every figure per step and returns to idle', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gw-load-smoke-')), 'report');
    const run = spawnSync(
      'npx',
      ['tsx', 'sip-test/load/gateway-load.ts', '--smoke', '--out', out],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    expect(run.status, run.stderr + run.stdout).toBe(0);
    expect(existsSync(`${out}.svg`)).toBe(true);
    expect(readFileSync(`${out}.svg`, 'utf8')).toContain('<polyline');
    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8'));

    const step = report.baseline.summary;
    expect(step.answered).toBe(1);
    expect(step.failed).toBe(0);
    expect(step.cpuPct).toBeGreaterThan(0);
    expect(step.cpuPct).toBeLessThan(200);
    // the load generators ran (SIPp, the probe, the agent, the runner), and the
    // whole machine was busy at least with them and the daemon (within a tick)
    expect(step.generatorsCpuPct).toBeGreaterThan(0);
    expect(step.machineBusyPct).toBeGreaterThan(0);
    expect(step.machineBusyPct).toBeLessThanOrEqual(100 * cpus().length + 1);
    expect(step.apiP99Ms).toBeGreaterThan(0);
    expect(step.inviteTo200P50Ms).toBeGreaterThanOrEqual(0);
    expect(step.rtpOutRatio).toBeGreaterThan(0.8);
    expect(step.rtpOutRatio).toBeLessThan(1.2);
    expect(step.spacingP99Ms).toBeGreaterThanOrEqual(0);
    expect(step.lossPct).toBeGreaterThanOrEqual(0);
    expect(step.rtpInRatio).toBeGreaterThan(0.5);
    expect(step.loopP99Ms).toBeGreaterThanOrEqual(0);

    const ramp = report.concurrencyRamp[0].summary;
    expect(ramp.answered).toBe(3);
    expect(ramp.rssKbPerCall).toEqual(expect.any(Number));
    expect(ramp.fdsPerCall).toBeGreaterThan(0);
    if (report.bridge.wiredInMain) {
      expect(ramp.agentStreams).toBeGreaterThan(0);
      expect(ramp.rtpToAgentP99Ms).toBeGreaterThan(0);
      expect(ramp.agentToRtpP99Ms).toBeGreaterThan(0);
      // the echoed audio found its queue empty and waited for a frame: within a frame and a bit
      expect(ramp.daemonAudioWaitP99Ms).toBeGreaterThan(0);
      expect(ramp.daemonAudioWaitP99Ms).toBeLessThanOrEqual(40);
    }
    expect(report.soak.backToIdle).toBe(true);
    expect(report.summary).toHaveProperty('largestConcurrencyHoldingEveryLimit');
    expect(report.summary).toHaveProperty('daemonCpuPctPerCallAtLargestPassing');
  }, 70_000);
});
