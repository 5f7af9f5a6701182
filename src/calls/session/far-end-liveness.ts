// Is the far end of an answered call still there? The media layer already
// ends a call whose RTP stops while RTP is expected (`rtp.inactivitySeconds`
// → no_rtp_stream). This covers what that rule cannot see: RTP that is not
// expected (the far end put the call on hold, a=inactive or recvonly), where
// a far end that vanished leaves nothing to notice but signaling. After as
// long without RTP from the far end, the far end is asked in its dialog
// (OPTIONS); no answer at all, a 408 or a 481 means it is gone and the call
// ends; any other answer means it is there, and it is asked again after the
// same time while the silence lasts (docs/decisions/no-zombie-calls.md).
import type { Clock } from '../../clock.js';

export interface FarEndLivenessOptions {
  /** Silence from the far end after which it is asked (rtp.inactivitySeconds); 0 turns this off. */
  silenceMs: number;
  /** The in-dialog probe: the final status, 0 when nothing came back at all. */
  probe(): Promise<number>;
  /** The far end did not answer (or said the dialog is gone): end the call. */
  gone(detail: 'far_end_probe_no_answer' | 'far_end_probe_481'): void;
  /** A probe that threw (never fatal: the call goes on). */
  onError?(err: unknown): void;
}

/** The probe's statuses that mean the far end no longer has the call. */
export function probeSaysGone(status: number): boolean {
  return status === 0 || status === 408 || status === 481;
}

/**
 * Fed with the far end's packet count (the media layer's periodic figures):
 * silence is proven since the last report whose count grew.
 */
export class FarEndLiveness {
  private lastGrowthAt: number;
  private lastProbeAt = Number.NEGATIVE_INFINITY;
  private probing = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly opts: FarEndLivenessOptions,
    /** The far end's packet count when the call was answered (early media counts). */
    private lastCount = 0,
  ) {
    this.lastGrowthAt = clock.now();
  }

  /** A media report: how many RTP packets the far end has sent so far. */
  packets(received: number): void {
    if (this.stopped || this.opts.silenceMs <= 0) return;
    const now = this.clock.now();
    if (received > this.lastCount) {
      this.lastCount = received;
      this.lastGrowthAt = now;
      return;
    }
    if (this.probing) return;
    if (now - this.lastGrowthAt < this.opts.silenceMs) return;
    if (now - this.lastProbeAt < this.opts.silenceMs) return;
    this.ask(now);
  }

  stop(): void {
    this.stopped = true;
  }

  private ask(now: number): void {
    this.probing = true;
    this.lastProbeAt = now;
    let asked: Promise<number>;
    try {
      asked = this.opts.probe();
    } catch (err) {
      asked = Promise.reject(err);
    }
    asked.then(
      (status) => {
        this.probing = false;
        if (this.stopped || !probeSaysGone(status)) return;
        this.stopped = true;
        this.opts.gone(status === 481 ? 'far_end_probe_481' : 'far_end_probe_no_answer');
      },
      (err: unknown) => {
        this.probing = false;
        this.opts.onError?.(err);
      },
    );
  }
}
