// The daemon's own figures on /metrics, read when scraped (nothing here runs
// per frame): the agent bridge's latency histograms, the media engine's
// pacing counters and send-spacing histogram, live calls, and the embedded
// SIP stack's counters. Sources are structural, so this file imports no
// layer; main.ts hands them in.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LatencySnapshot } from './latency-histogram.js';

export interface GatewayMetricSources {
  /** Process-wide agent bridge latencies (agent-bridge/agent-latency.ts). */
  agentLatency: {
    rtpToWs: { snapshot(): LatencySnapshot };
    wsToRtp: { snapshot(): LatencySnapshot };
  };
  /** A bridged transfer's relay between the callee's and the target's legs. */
  transferRelayLatency?: { snapshot(): LatencySnapshot };
  media: {
    readonly activeSessions: number;
    pacingStats(): { wakeups: number; ticks: number; skippedTicks: number; maxLateMs: number };
    /** |interval − frame| between each session's consecutive frames, bins of `spacingBinMs`; the last bin holds the overflow. */
    sendSpacingHistogram(): Uint32Array;
    /** Agent audio that found its call's queue empty until its frame left, same bins. */
    agentAudioWaitHistogram(): Uint32Array;
  };
  spacingBinMs: number;
  calls: { readonly liveCalls: number };
  /** The embedded SIP stack (absent with drachtio). */
  sip?: { stats(): object; edge?(): SipEdgeSource };
  /** Trunks pinged with OPTIONS and their state (absent when pings are off). */
  trunks?: { pinged(): Array<{ trunkId: string; status: 'online' | 'offline' | 'unknown' }> };
}

/** The SIP stack's edge (issue 23): drops by reason, budgets, the UDP socket. */
export interface SipEdgeSource {
  dropped: Record<string, number>;
  silencings: number;
  trustedAddresses: number;
  budget: { serverTransactions: number; clientTransactions: number };
  udp?: { recvBufferBytes: number; sendBufferBytes: number; kernelDrops: number | undefined };
}

/** Bounds for the send-spacing deviation histogram, ms. */
export const SPACING_BOUNDS_MS = [0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 5, 10, 20];
/** Bounds for the agent-audio wait histogram, ms (a 20 ms frame is the expected wait at worst). */
export const AUDIO_WAIT_BOUNDS_MS = [1, 2.5, 5, 7.5, 10, 12.5, 15, 17.5, 20, 21, 22.5, 25, 30, 40];

/** Counters the SIP stack reports as levels, not totals. */
const SIP_GAUGES = new Set(['activeLegs', 'clientTransactions', 'serverTransactions']);

export function registerGatewayMetrics(registry: Registry, s: GatewayMetricSources): void {
  const registers = [registry];
  new SnapshotHistogram(
    'gateway_agent_rtp_to_ws_latency_ms',
    "Callee frame's arrival on the RTP socket until its WebSocket frame is handed to the socket, ms.",
    registry,
    () => s.agentLatency.rtpToWs.snapshot(),
  );
  new SnapshotHistogram(
    'gateway_agent_ws_to_rtp_latency_ms',
    "Agent audio frame's receipt on the WebSocket until it is queued for RTP playout, ms (pacing comes on top).",
    registry,
    () => s.agentLatency.wsToRtp.snapshot(),
  );
  const relay = s.transferRelayLatency;
  if (relay) {
    new SnapshotHistogram(
      'gateway_transfer_relay_latency_ms',
      "A bridged transfer's frame: its arrival on one leg's RTP socket until it is queued for playout on the other leg, ms (the other leg's 20 ms pacing comes on top).",
      registry,
      () => relay.snapshot(),
    );
  }
  new SnapshotHistogram(
    'gateway_media_send_spacing_deviation_ms',
    "|interval − 20 ms| between the starts of each session's consecutive frames in the daemon (pauses inside a burst included), ms.",
    registry,
    () => spacingSnapshot(s.media.sendSpacingHistogram(), s.spacingBinMs, SPACING_BOUNDS_MS),
  );
  new SnapshotHistogram(
    'gateway_media_agent_audio_wait_ms',
    "Agent audio that found its call's playout queue empty until the RTP frame carrying it left, ms: the wait for the call's next 20 ms frame and the pacing clock's lateness (audio queued behind the agent's own earlier audio is not counted).",
    registry,
    () => spacingSnapshot(s.media.agentAudioWaitHistogram(), s.spacingBinMs, AUDIO_WAIT_BOUNDS_MS),
  );
  const pacing = (key: 'wakeups' | 'ticks' | 'skippedTicks', name: string, help: string): Counter =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(s.media.pacingStats()[key]);
      },
    });
  pacing('wakeups', 'gateway_media_pacing_wakeups_total', 'Timer wake-ups of the pacing clock.');
  pacing('ticks', 'gateway_media_pacing_ticks_total', 'Pacing slot ticks run.');
  pacing(
    'skippedTicks',
    'gateway_media_pacing_skipped_ticks_total',
    'Pacing ticks skipped after a stall (beyond the catch-up frames).',
  );
  new Gauge({
    name: 'gateway_media_pacing_max_late_ms',
    help: 'Worst lateness of a pacing tick against its due time since start, ms.',
    registers,
    collect() {
      this.set(s.media.pacingStats().maxLateMs);
    },
  });
  new Gauge({
    name: 'gateway_media_sessions',
    help: 'Open media sessions.',
    registers,
    collect() {
      this.set(s.media.activeSessions);
    },
  });
  new Gauge({
    name: 'gateway_calls_live',
    help: 'Calls being run (dialing, ringing or answered).',
    registers,
    collect() {
      this.set(s.calls.liveCalls);
    },
  });
  const trunks = s.trunks;
  if (trunks) {
    new Gauge({
      name: 'gateway_trunk_up',
      help: 'Whether a trunk that asked for OPTIONS pings answers them (1) or not (0); a trunk not checked yet has no sample.',
      labelNames: ['trunk'],
      registers,
      collect() {
        this.reset();
        for (const t of trunks.pinged()) {
          if (t.status !== 'unknown') this.set({ trunk: t.trunkId }, t.status === 'online' ? 1 : 0);
        }
      },
    });
  }
  const sip = s.sip;
  if (!sip) return;
  if (sip.edge) registerSipEdgeMetrics(registers, sip.edge.bind(sip));
  const sipValue = (key: string): number => {
    const v = (sip.stats() as Record<string, unknown>)[key];
    return typeof v === 'number' ? v : 0;
  };
  for (const [key, v] of Object.entries(sip.stats())) {
    if (typeof v !== 'number') continue;
    const name = `gateway_sip_${snake(key)}`;
    const help = `SIP stack: ${key}.`;
    if (SIP_GAUGES.has(key)) {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(sipValue(key));
        },
      });
    } else {
      new Counter({
        name: `${name}_total`,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(sipValue(key));
        },
      });
    }
  }
}

/** One read of the edge per scrape (it reads /proc/net/udp), shared by its metrics. */
function registerSipEdgeMetrics(registers: Registry[], read: () => SipEdgeSource): void {
  let cached: { at: number; value: SipEdgeSource } | undefined;
  const edge = (): SipEdgeSource => {
    const now = Date.now();
    if (!cached || now - cached.at > 250) cached = { at: now, value: read() };
    return cached.value;
  };
  new Counter({
    name: 'gateway_sip_dropped_total',
    help: 'SIP messages given no processing, by reason: stranger (out-of-dialog request from an address that is not a trunk or allowed source; one stateless 403 or nothing), rate_limited (a stranger IP over its token bucket, silenced), budget (the server transaction budget was full), malformed (did not parse).',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(edge().dropped)) this.inc({ reason }, n);
    },
  });
  new Counter({
    name: 'gateway_sip_stranger_silencings_total',
    help: 'Times a stranger IP emptied its token bucket (sip.strangerRateLimit) and was silenced.',
    registers,
    collect() {
      this.reset();
      this.inc(edge().silencings);
    },
  });
  const gauge = (name: string, help: string, value: (e: SipEdgeSource) => number | undefined) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const v = value(edge());
        if (v !== undefined && Number.isFinite(v)) this.set(v);
      },
    });
  gauge(
    'gateway_sip_trusted_addresses',
    'Trunk addresses (resolved) trusted at the SIP edge now, besides sip.allowedSources.',
    (e) => e.trustedAddresses,
  );
  gauge(
    'gateway_sip_server_transactions_max',
    'Budget of live SIP server transactions (sip.maxServerTransactions).',
    (e) => e.budget.serverTransactions,
  );
  gauge(
    'gateway_sip_client_transactions_max',
    'Budget of live SIP client transactions (sip.maxClientTransactions).',
    (e) => e.budget.clientTransactions,
  );
  // The UDP figures exist only with a UDP socket; the kernel's counter only where /proc/net/udp has it.
  const first = edge();
  if (!first.udp) return;
  gauge(
    'gateway_sip_udp_receive_buffer_bytes',
    "The SIP UDP socket's receive buffer as the kernel reports it (Linux: twice the size granted).",
    (e) => e.udp?.recvBufferBytes,
  );
  gauge(
    'gateway_sip_udp_send_buffer_bytes',
    "The SIP UDP socket's send buffer as the kernel reports it (Linux: twice the size granted).",
    (e) => e.udp?.sendBufferBytes,
  );
  if (first.udp.kernelDrops === undefined) return;
  new Counter({
    name: 'gateway_sip_udp_kernel_drops_total',
    help: 'Datagrams the kernel dropped for the SIP UDP socket (its receive buffer was full), from /proc/net/udp; no sample where that is not available.',
    registers,
    collect() {
      const drops = edge().udp?.kernelDrops;
      if (drops === undefined) return;
      this.reset();
      this.inc(drops);
    },
  });
}

/** The media layer's fine bins folded into a few Prometheus buckets. */
export function spacingSnapshot(
  bins: Uint32Array,
  binMs: number,
  boundsMs: readonly number[],
): LatencySnapshot {
  const counts = new Array<number>(boundsMs.length + 1).fill(0);
  let count = 0;
  let sumMs = 0;
  let maxMs = 0;
  let bucket = 0;
  for (let b = 0; b < bins.length; b++) {
    const n = bins[b] ?? 0;
    const ms = b * binMs;
    while (bucket < boundsMs.length && ms > (boundsMs[bucket] ?? Infinity)) bucket++;
    if (n === 0) continue;
    // the last bin holds everything beyond the range
    const i = b === bins.length - 1 ? boundsMs.length : bucket;
    counts[i] = (counts[i] ?? 0) + n;
    count += n;
    sumMs += n * ms;
    maxMs = ms;
  }
  return { boundsMs: [...boundsMs], counts, count, sumMs, maxMs };
}

/**
 * A Prometheus histogram whose buckets are read from a snapshot at scrape
 * time, so the hot path keeps its own allocation-free histogram.
 */
export class SnapshotHistogram extends Histogram {
  constructor(
    private readonly metricName: string,
    private readonly metricHelp: string,
    registry: Registry,
    private readonly read: () => LatencySnapshot,
  ) {
    super({ name: metricName, help: metricHelp, registers: [registry], buckets: [1] });
  }

  // prom-client's registry formats from this; its get() (JSON) builds on it.
  async getForPromString(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    values: { metricName: string; labels: Record<string, string | number>; value: number }[];
    aggregator: 'sum';
  }> {
    const s = this.read();
    const values = [];
    let acc = 0;
    for (let i = 0; i < s.counts.length; i++) {
      acc += s.counts[i] ?? 0;
      values.push({
        metricName: `${this.metricName}_bucket`,
        labels: { le: i < s.boundsMs.length ? (s.boundsMs[i] ?? 0) : '+Inf' },
        value: acc,
        sharedLabels: {},
      });
    }
    values.push({
      metricName: `${this.metricName}_sum`,
      labels: {},
      value: s.sumMs,
      sharedLabels: {},
    });
    values.push({
      metricName: `${this.metricName}_count`,
      labels: {},
      value: s.count,
      sharedLabels: {},
    });
    return {
      name: this.metricName,
      help: this.metricHelp,
      type: 'histogram',
      values,
      aggregator: 'sum',
    };
  }
}

function snake(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The webhook worker's outcomes and the outbox's backlog (issue 25 item 6). */
export function registerWebhookMetrics(
  registry: Registry,
  worker: { results: Record<string, number>; inFlightCount: number },
  outbox: { backlog(nowMs: number): { pending: number; oldestAgeSeconds: number } },
  clock: { now(): number },
): void {
  const registers = [registry];
  new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), retry (network error, 408, 429, 5xx: tried again later), failed (other answers, a refused address, or the retry window closed).',
    labelNames: ['result'],
    registers,
    collect() {
      this.reset();
      for (const [result, n] of Object.entries(worker.results)) this.inc({ result }, n);
    },
  });
  let cached: { at: number; value: { pending: number; oldestAgeSeconds: number } } | undefined;
  const backlog = () => {
    const now = clock.now();
    if (!cached || now - cached.at > 250) cached = { at: now, value: outbox.backlog(now) };
    return cached.value;
  };
  new Gauge({
    name: 'gateway_webhook_queue_depth',
    help: 'Webhook deliveries pending (due now or waiting for a retry).',
    registers,
    collect() {
      this.set(backlog().pending);
    },
  });
  new Gauge({
    name: 'gateway_webhook_oldest_pending_age_seconds',
    help: "Age of the oldest pending delivery's event, seconds (0 when none is pending).",
    registers,
    collect() {
      this.set(backlog().oldestAgeSeconds);
    },
  });
  new Gauge({
    name: 'gateway_webhook_in_flight',
    help: 'Webhook requests in flight now.',
    registers,
    collect() {
      this.set(worker.inFlightCount);
    },
  });
}
