// Used by the agent bridge, the store's write timings and /metrics.
/**
 * Fixed-bucket latency histogram (Prometheus style: each bucket counts values
 * ≤ its bound, plus +Inf). Cheap enough to record 50 values a second per
 * call: one comparison loop over a dozen bounds, no allocation.
 */

/** Default bucket upper bounds in ms. */
export const DEFAULT_LATENCY_BOUNDS_MS = [0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

export interface LatencySnapshot {
  /** Upper bounds in ms; the last count (+Inf) has no bound. */
  boundsMs: number[];
  /** Non-cumulative counts, one per bound plus one for +Inf. */
  counts: number[];
  count: number;
  sumMs: number;
  maxMs: number;
}

export class LatencyHistogram {
  private readonly counts: number[];
  private count = 0;
  private sumMs = 0;
  private maxMs = 0;

  constructor(private readonly boundsMs: readonly number[] = DEFAULT_LATENCY_BOUNDS_MS) {
    this.counts = new Array<number>(boundsMs.length + 1).fill(0);
  }

  record(ms: number): void {
    if (!Number.isFinite(ms)) return;
    const v = ms < 0 ? 0 : ms;
    let i = 0;
    while (i < this.boundsMs.length && v > (this.boundsMs[i] ?? Infinity)) i += 1;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.count += 1;
    this.sumMs += v;
    if (v > this.maxMs) this.maxMs = v;
  }

  /**
   * Upper bound of the bucket holding quantile `q` (0..1): an estimate that
   * errs high. `maxMs` for the +Inf bucket; 0 when empty.
   */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(Math.min(1, Math.max(0, q)) * this.count);
    let seen = 0;
    for (let i = 0; i < this.counts.length; i += 1) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank && seen > 0) return Math.min(this.boundsMs[i] ?? this.maxMs, this.maxMs);
    }
    return this.maxMs;
  }

  snapshot(): LatencySnapshot {
    return {
      boundsMs: [...this.boundsMs],
      counts: [...this.counts],
      count: this.count,
      sumMs: this.sumMs,
      maxMs: this.maxMs,
    };
  }
}
