// One measurement window over the daemon and the helpers: CPU from
// /proc/<pid>/stat deltas, event-loop p99 from /metrics (prom-client resets
// its histogram at every scrape, so scraping at both ends gives the window's
// p99), the daemon's own latency and spacing histograms from the same two
// scrapes (diffed), RSS and descriptors at the end, and the probe's and
// agent's histograms (the external figures) reset at the start.
import { cpus } from 'node:os';
import type { ChildHandle } from './child-role.js';
import { daemonFigures, type DaemonFigures } from './daemon-metrics.js';
import type { Gateway } from './gateway-client.js';
import {
  cpuWindow,
  cpuWindowOf,
  fdCount,
  machineBusyWindow,
  metricNames,
  metricValue,
  rssKb,
  udpSocketsInRange,
} from './proc-stats.js';

/**
 * prom-client samples the loop with monitorEventLoopDelay({ resolution: 10 }),
 * and Node records each timer's full interval, so an idle loop reads ~10 ms.
 */
const LOOP_SAMPLING_MS = 10;

export interface HistogramSummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ProbeStats {
  flows: number;
  packets: number;
  expected: number;
  spacingMs: HistogramSummary;
  agentToRtpMs: HistogramSummary;
  probeLoopP99Ms: number;
}

export interface AgentStats {
  connections: number;
  open: number;
  started: number;
  stopped: number;
  mediaIn: number;
  rtpToAgentMs: HistogramSummary;
  agentLoopP99Ms: number;
}

export interface WindowResult {
  seconds: number;
  cpuPct: number;
  /** The load generators together (SIPp, the probe, the agent, this runner), % of one core. */
  generatorsCpuPct: number;
  /** Every process on the machine together, % of one core (100 × cores when saturated). */
  machineBusyPct: number;
  /** Event-loop delay p99 beyond prom-client's 10 ms sampling timer (what the limit checks). */
  loopP99Ms: number;
  /** nodejs_eventloop_lag_p99_seconds as exposed: Node records the whole timer interval. */
  rawLoopP99Ms: number;
  rssKb: number;
  fds: number;
  rtpSockets: number;
  /** Measured outside the daemon (probe and stamping agent processes). */
  probe: ProbeStats;
  agent: AgentStats;
  /** Measured inside the daemon, from its /metrics. */
  daemon: DaemonFigures;
}

export interface Observed {
  gw: Gateway;
  probe: ChildHandle;
  agent: ChildHandle;
  rtpRange: [number, number];
  /** The load generators' processes: SIPp, the probe, the agent and this runner. */
  generatorPids: () => number[];
}

export async function scrapeMetrics(gw: Gateway): Promise<string> {
  try {
    const r = await fetch(`${gw.daemon.baseUrl}/metrics`);
    return await r.text();
  } catch {
    return '';
  }
}

export async function openWindow(o: Observed): Promise<() => Promise<WindowResult>> {
  const before = await scrapeMetrics(o.gw); // resets the event-loop histogram
  await o.probe.request('stats', { reset: true });
  await o.agent.request('stats', { reset: true });
  const pid = o.gw.daemon.pid;
  const cpu = cpuWindow(pid);
  const generators = cpuWindowOf(o.generatorPids());
  const machine = machineBusyWindow(cpus().length);
  return async () => {
    const c = cpu();
    const generatorsCpuPct = generators();
    const machineBusyPct = machine();
    const text = await scrapeMetrics(o.gw);
    const rawLoop = metricValue(text, 'nodejs_eventloop_lag_p99_seconds') * 1000;
    const [probe, agent] = await Promise.all([
      o.probe.request<ProbeStats>('stats', { reset: true }),
      o.agent.request<AgentStats>('stats', { reset: true }),
    ]);
    return {
      seconds: c.seconds,
      cpuPct: c.cpuPct,
      generatorsCpuPct,
      machineBusyPct,
      loopP99Ms: Math.max(0, rawLoop - LOOP_SAMPLING_MS),
      rawLoopP99Ms: rawLoop,
      rssKb: rssKb(pid),
      fds: fdCount(pid),
      rtpSockets: udpSocketsInRange(pid, o.rtpRange[0], o.rtpRange[1]),
      probe,
      agent,
      daemon: daemonFigures(before, text),
    };
  };
}

export async function exposedMetricNames(gw: Gateway): Promise<string[]> {
  return metricNames(await scrapeMetrics(gw));
}
