// The store bench in small (5 calls/s for 3 s, 20 requests/s for 2 s) on
// every configuration: it must start SQLite, PostgreSQL and two daemons on
// one database, complete calls, answer every request without a 5xx, stop
// everything it started, and report every figure. The full run's figures
// are in docs/benchmarks.md.
import { describe, expect, it } from 'vitest';
import { runStoreBench } from './store-bench.js';

const finite = expect.any(Number);

describe('store bench (issue 27)', () => {
  it('reports calls, API latency and CPU per process for sqlite-1, postgres-1 and postgres-2', async () => {
    const r = await runStoreBench({
      rate: 5,
      seconds: 3,
      apiRate: 20,
      apiSeconds: 2,
      apiRepeats: 2,
      holdMs: 1000,
      warmupSeconds: 0,
      idleSeconds: 1,
      configs: ['sqlite-1', 'postgres-1', 'postgres-2'],
      rtp: [64000, 65398],
      log: () => undefined,
    });
    expect(r.configs.map((c) => c.name)).toEqual(['sqlite-1', 'postgres-1', 'postgres-2']);
    for (const c of r.configs) {
      const why = JSON.stringify(c);
      const processes = [
        'daemon-1',
        ...(c.daemons === 2 ? ['daemon-2'] : []),
        ...(c.store === 'postgres' ? ['postgres'] : []),
        'far-end',
        'agent',
        'runner',
      ];
      expect(Object.keys(c.idlePctOfCore).sort()).toEqual([...processes].sort());

      // whole-gateway calls
      expect(c.calls.accepted, why).toBe(15);
      expect(c.calls.completed, why).toBeGreaterThan(0);
      expect(Object.keys(c.calls.refusedByStatus), why).toEqual([]);
      expect(c.calls.sustainedCps).toBeGreaterThan(0);
      expect(c.calls.initiateMs.p50).toBeGreaterThan(0);
      expect(c.calls.initiateMs.p99).toBeGreaterThanOrEqual(c.calls.initiateMs.p50);
      expect(Object.keys(c.calls.cpu).sort()).toEqual([...processes].sort());
      for (const p of processes)
        expect(c.calls.cpu[p], `${c.name} ${p}`).toEqual({
          cpuMs: finite,
          pctOfCore: finite,
          msPerUnit: finite,
        });
      expect(c.calls.cpu['daemon-1']!.msPerUnit).toBeGreaterThan(0);
      expect(c.daemonsMsPerCall).toBeGreaterThan(0);
      expect(c.gatewayMsPerCall).toBeGreaterThanOrEqual(c.daemonsMsPerCall);
      expect(c.callsPerSecondPerCore).toBeGreaterThan(0);

      // API path: every request answered, none with a 5xx
      expect(c.api.unanswered, why).toBe(0);
      expect(c.api.serverErrors, why).toBe(0);
      expect(c.api.byStatus, why).toEqual({ 200: 40 });
      expect(c.api.latencyMs.p99).toBeGreaterThan(0);
      // two API phases: the report's is the one with the lower p99 (the lower middle of two)
      expect(c.apiP99sMs, why).toHaveLength(2);
      expect(c.api.latencyMs.p99).toBe(Math.min(...c.apiP99sMs));
      expect(c.api.latencyMsByDaemon).toHaveLength(c.daemons);
      expect(Object.keys(c.api.cpu).sort()).toEqual([...processes].sort());
      expect(c.daemonsMsPerRequest).toBeGreaterThan(0);
      if (c.store === 'postgres') {
        expect(c.postgresMsPerCall).toBeGreaterThan(0);
        expect(c.postgresMsPerRequest).toBeGreaterThan(0);
      } else {
        expect(c.postgresMsPerCall).toBeNull();
      }
      expect(typeof c.apiP99HeldTarget).toBe('boolean');
    }
    expect(r.ratios.daemonCpuPerCallPostgres1OverSqlite).toBeGreaterThan(0);
    expect(r.ratios.daemonCpuPerCallPostgres2OverSqlite).toBeGreaterThan(0);
    expect(Object.keys(r.ratios.apiP99Held)).toHaveLength(3);
    expect(r.machine.cpus).toBeGreaterThan(0);
  }, 120_000);
});
