// The daemon's own figures over a window, from two /metrics scrapes: its
// cumulative histograms (agent bridge latencies, pacing send spacing) are
// diffed bucket by bucket, so the quantiles are the window's. These are
// measured inside the daemon: unlike the probe's and the stamping agent's
// figures they leave out the other processes' scheduling.
import { metricValue } from './proc-stats.js';
import { round } from './stats.js';

/** Cumulative bucket counts by upper bound (+Inf as Infinity), with count and sum. */
export interface PromHistogram {
  buckets: [number, number][];
  count: number;
  sum: number;
}

export interface WindowQuantiles {
  count: number;
  /** The observations' total in the window (ms for the latency histograms). */
  sum: number;
  /** Upper bound of the bucket holding the quantile (errs high); Infinity past the last bound. */
  p50: number;
  p99: number;
}

export interface DaemonFigures {
  rtpToWsMs: WindowQuantiles;
  wsToRtpMs: WindowQuantiles;
  /** Agent audio that found its call's queue empty until its RTP frame left (the next 20 ms frame). */
  agentAudioWaitMs: WindowQuantiles;
  /** |interval − 20 ms| between a pacing slot's ticks, as the daemon's schedule achieved it. */
  sendSpacingMs: WindowQuantiles;
  pacingSkippedTicks: number;
  liveCalls: number;
  /** The agents' WebSocket set-up (connect until open). */
  agentConnectMs: WindowQuantiles;
  /** SQLite: each write statement's run; commits with and without the WAL sync (absent on PostgreSQL: count 0). */
  storeWriteMs: WindowQuantiles;
  storeCommitFullMs: WindowQuantiles;
  storeCommitNormalMs: WindowQuantiles;
  /** SQLite: the WAL's group fsyncs, off the event loop. */
  storeFsyncMs: WindowQuantiles;
  /** The media worker's worst per-second event-loop p99 in the window, as exposed (10 ms sampling included). */
  mediaWorkerRawLoopP99Ms: number;
  /** CPU seconds spent in the window by each of the daemon's threads (main, media, other). */
  threadCpuSeconds: Record<string, number>;
}

export const DAEMON_HISTOGRAMS = {
  rtpToWsMs: 'gateway_agent_rtp_to_ws_latency_ms',
  wsToRtpMs: 'gateway_agent_ws_to_rtp_latency_ms',
  agentAudioWaitMs: 'gateway_media_agent_audio_wait_ms',
  sendSpacingMs: 'gateway_media_send_spacing_deviation_ms',
  agentConnectMs: 'gateway_agent_connect_ms',
  storeWriteMs: 'gateway_store_write_ms',
  storeCommitFullMs: 'gateway_store_commit_full_ms',
  storeCommitNormalMs: 'gateway_store_commit_normal_ms',
  storeFsyncMs: 'gateway_store_fsync_ms',
} as const;

export function parseHistogram(text: string, name: string): PromHistogram | undefined {
  const buckets: [number, number][] = [];
  const re = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm');
  for (const m of text.matchAll(re)) {
    buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  }
  if (buckets.length === 0) return undefined;
  return {
    buckets,
    count: metricValue(text, `${name}_count`),
    sum: metricValue(text, `${name}_sum`),
  };
}

/** The window's quantiles: `after − before`, bucket by bucket (before may be absent). */
export function windowQuantiles(
  before: PromHistogram | undefined,
  after: PromHistogram | undefined,
): WindowQuantiles {
  if (!after) return { count: 0, sum: 0, p50: NaN, p99: NaN };
  const prior = new Map(before?.buckets ?? []);
  const diff = after.buckets.map(([le, n]) => [le, n - (prior.get(le) ?? 0)] as const);
  const count = diff[diff.length - 1]?.[1] ?? 0;
  const q = (p: number): number => {
    if (count <= 0) return NaN;
    const rank = Math.ceil(p * count);
    const hit = diff.find(([, n]) => n >= rank);
    return hit ? hit[0] : NaN;
  };
  return {
    count,
    sum: round(after.sum - (before?.sum ?? 0), 3),
    p50: round(q(0.5), 3),
    p99: round(q(0.99), 3),
  };
}

/** The figures between two scrapes of the daemon's /metrics. */
export function daemonFigures(before: string, after: string): DaemonFigures {
  const h = (key: keyof typeof DAEMON_HISTOGRAMS) =>
    windowQuantiles(
      parseHistogram(before, DAEMON_HISTOGRAMS[key]),
      parseHistogram(after, DAEMON_HISTOGRAMS[key]),
    );
  const skipped = (t: string) => metricValue(t, 'gateway_media_pacing_skipped_ticks_total');
  return {
    rtpToWsMs: h('rtpToWsMs'),
    wsToRtpMs: h('wsToRtpMs'),
    agentAudioWaitMs: h('agentAudioWaitMs'),
    sendSpacingMs: h('sendSpacingMs'),
    pacingSkippedTicks: skipped(after) - skipped(before),
    liveCalls: metricValue(after, 'gateway_calls_live'),
    agentConnectMs: h('agentConnectMs'),
    storeWriteMs: h('storeWriteMs'),
    storeCommitFullMs: h('storeCommitFullMs'),
    storeCommitNormalMs: h('storeCommitNormalMs'),
    storeFsyncMs: h('storeFsyncMs'),
    mediaWorkerRawLoopP99Ms: metricValue(after, 'gateway_media_worker_loop_delay_p99_ms'),
    threadCpuSeconds: threadCpuDiff(before, after),
  };
}

/** gateway_thread_cpu_seconds_total by thread: `after − before`, s. */
export function threadCpuDiff(before: string, after: string): Record<string, number> {
  const read = (text: string) => {
    const m = new Map<string, number>();
    const re = /^gateway_thread_cpu_seconds_total\{thread="([^"]+)"\} (\S+)$/gm;
    for (const x of text.matchAll(re)) m.set(x[1]!, Number(x[2]));
    return m;
  };
  const prior = read(before);
  const out: Record<string, number> = {};
  for (const [thread, s] of read(after)) out[thread] = round(s - (prior.get(thread) ?? 0), 3);
  return out;
}
