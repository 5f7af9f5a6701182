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
}

export const DAEMON_HISTOGRAMS = {
  rtpToWsMs: 'gateway_agent_rtp_to_ws_latency_ms',
  wsToRtpMs: 'gateway_agent_ws_to_rtp_latency_ms',
  agentAudioWaitMs: 'gateway_media_agent_audio_wait_ms',
  sendSpacingMs: 'gateway_media_send_spacing_deviation_ms',
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
  if (!after) return { count: 0, p50: NaN, p99: NaN };
  const prior = new Map(before?.buckets ?? []);
  const diff = after.buckets.map(([le, n]) => [le, n - (prior.get(le) ?? 0)] as const);
  const count = diff[diff.length - 1]?.[1] ?? 0;
  const q = (p: number): number => {
    if (count <= 0) return NaN;
    const rank = Math.ceil(p * count);
    const hit = diff.find(([, n]) => n >= rank);
    return hit ? hit[0] : NaN;
  };
  return { count, p50: round(q(0.5), 3), p99: round(q(0.99), 3) };
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
  };
}
