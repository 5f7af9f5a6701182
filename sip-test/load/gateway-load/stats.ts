// Small statistics helpers shared by the load runner's parts.

/** The q-quantile (0..1) of unsorted samples, nearest-rank; NaN when empty. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: readonly number[]): number => quantile(samples, 0.5);

/** Rounds for the report (NaN and ±Infinity become null in JSON anyway). */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A fixed-bin histogram of non-negative millisecond values, mergeable across processes. */
export class BinnedHistogram {
  readonly bins: number[];

  constructor(
    readonly binMs: number,
    binCount: number,
  ) {
    this.bins = new Array<number>(binCount).fill(0);
  }

  add(ms: number): void {
    const bin = Math.min(this.bins.length - 1, Math.max(0, Math.round(ms / this.binMs)));
    this.bins[bin]!++;
  }

  get count(): number {
    return this.bins.reduce((a, b) => a + b, 0);
  }

  reset(): void {
    this.bins.fill(0);
  }

  quantile(q: number): number {
    const total = this.count;
    if (total === 0) return NaN;
    let seen = 0;
    for (let i = 0; i < this.bins.length; i++) {
      seen += this.bins[i]!;
      if (seen >= q * total) return i * this.binMs;
    }
    return (this.bins.length - 1) * this.binMs;
  }

  summary(): { count: number; p50: number; p99: number; max: number } {
    let max = NaN;
    for (let i = this.bins.length - 1; i >= 0; i--) {
      if (this.bins[i]! > 0) {
        max = i * this.binMs;
        break;
      }
    }
    return {
      count: this.count,
      p50: round(this.quantile(0.5)),
      p99: round(this.quantile(0.99)),
      max: round(max),
    };
  }
}
