import { countInBins, SPACING_BINS } from './pacing-clock.js';

/**
 * The gateway's own share of agent → RTP latency: how long agent audio that
 * found its call's playout queue empty waited until the frame carrying it
 * left (the call's next 20 ms frame, the pacing clock's lateness). Audio
 * queued behind earlier audio waits for the agent's own audio ahead of it,
 * which the agent chose to send early, so it is not counted. One histogram
 * per engine, bins of SPACING_BIN_MS; the last bin holds the overflow.
 */
export class AgentAudioWait {
  private since = NaN;

  constructor(private readonly bins: Uint32Array) {}

  static histogram(): Uint32Array {
    return new Uint32Array(SPACING_BINS);
  }

  /** Whether audio that found the queue empty is waiting to be sent. */
  get pending(): boolean {
    return this.since === this.since;
  }

  /** Audio was queued at `now` into an empty queue. */
  queuedIntoEmpty(now: number): void {
    if (!this.pending) this.since = now;
  }

  /** A frame carrying agent audio left at `now`. */
  sent(now: number): void {
    if (!this.pending) return;
    countInBins(this.bins, now - this.since);
    this.since = NaN;
  }

  /** The waiting audio was dropped (clear) or consumed unsent (hold). */
  cancel(): void {
    this.since = NaN;
  }
}
