// Transfer by bridging (issue 24 item 3), the fallback of a refused REFER:
// the destination dialed as a second leg through the call's trunk, its own
// media session, and once it answers the audio relayed both ways between the
// two media legs (μ-law frames as received: MediaLeg.enqueue takes μ-law
// 8 kHz bytes). The agent leaves the media path then (AgentMediaGate). The
// session owns it: `end()` lets go of the target's leg and media on every
// path (CANCEL before the answer, BYE after, the media closed once).
import type { Logger } from 'pino';
import type { NetworkQuality } from '../../model/call-record.js';
import type { MediaLeg, MediaLegEvents, MediaPort, ReceivedFrame } from '../ports/media-port.js';
import type { DialRequest, SignalingLeg, SignalingPort } from '../ports/signaling-port.js';
import type { Timers } from '../timers.js';

/** How the target's leg came out. */
export type BridgeDialResult =
  { ok: true; callId: string } | { ok: false; status: number; reason: string; noAnswer?: boolean };

const MEDIA_CLOSE_TIMEOUT_MS = 2000;

export interface BridgeHooks {
  /** The target answered: the agent must leave the media path now. */
  detachAgent(): void;
  /** The target hung up (or its leg failed) after the answer: end the callee's leg. */
  targetEnded(): void;
}

export class TargetBridge {
  private leg: SignalingLeg | undefined;
  private targetMedia: MediaLeg | undefined;
  private answered = false;
  private legOver = false;
  private settled = false;
  private ending: Promise<NetworkQuality | undefined> | undefined;
  private waitTimer: unknown;
  inviteSentAt: string | undefined;

  constructor(
    private readonly signaling: SignalingPort,
    private readonly media: MediaPort,
    private readonly timers: Timers,
    private readonly log: Logger,
    /** The callee's media leg (the first leg's). */
    private readonly calleeMedia: MediaLeg,
    private readonly hooks: BridgeHooks,
    private readonly now: () => string,
  ) {}

  /** True once the target answered and the two legs are bridged. */
  get bridged(): boolean {
    return this.answered;
  }

  /**
   * Dials the target; resolves when it answered (bridged), failed, or did
   * not answer within `waitMs` (CANCEL sent). Never rejects.
   */
  dial(
    build: (sdp: string) => Omit<DialRequest, 'answerOffer' | 'onSending'>,
    waitMs: number,
  ): Promise<BridgeDialResult> {
    return new Promise<BridgeDialResult>((resolve) => {
      const settle = (r: BridgeDialResult): void => {
        if (this.settled) return;
        this.settled = true;
        this.timers.clearTimeout(this.waitTimer);
        resolve(r);
      };
      void (async () => {
        try {
          const targetMedia = await this.media.createSession({});
          if (this.ending) {
            // The call ended while the media session was being made: it goes at once.
            targetMedia
              .close('transfer_ended')
              .catch((err: unknown) => this.log.warn({ err }, 'bridge: target media not closed'));
            return settle({ ok: false, status: 0, reason: 'call_ended' });
          }
          this.targetMedia = targetMedia;
          const leg = this.signaling.invite({
            ...build(targetMedia.createOffer()),
            answerOffer: (o) => targetMedia.answerOffer(o.sdp),
            onSending: () => {
              this.inviteSentAt = this.now();
            },
          });
          this.leg = leg;
          leg.on('answered', (e) => {
            try {
              if (this.settled || this.ending) {
                // Too late (timed out, call over): it answered all the same; end it.
                this.legOver = true;
                leg
                  .bye()
                  .catch((err: unknown) => this.log.warn({ err }, 'bridge: BYE to target failed'));
                return;
              }
              targetMedia.applyAnswer(e.sdp);
              this.answered = true;
              this.hooks.detachAgent();
              this.calleeMedia.onAudio((f: ReceivedFrame) => targetMedia.enqueue(f.ulaw));
              targetMedia.onAudio((f: ReceivedFrame) => this.calleeMedia.enqueue(f.ulaw));
              settle({ ok: true, callId: leg.callId });
            } catch (err) {
              this.log.warn({ err }, 'bridge: target answer unusable');
              this.answered = true;
              this.byeTarget();
              settle({ ok: false, status: 488, reason: 'Not Acceptable Here' });
            }
          });
          leg.on('failed', (f) => {
            const ours = this.legOver;
            this.legOver = true;
            if (this.answered && this.settled && !ours) this.hooks.targetEnded();
            settle({ ok: false, status: f.status, reason: f.reason });
          });
          leg.on('ended', () => {
            const ours = this.legOver;
            this.legOver = true;
            if (this.answered && !ours) this.hooks.targetEnded();
          });
          this.waitTimer = this.timers.setTimeout(() => {
            if (this.settled) return;
            this.log.info('bridge: target did not answer in time, cancelling');
            this.cancelTarget();
            settle({ ok: false, status: 0, reason: 'no answer in time', noAnswer: true });
          }, waitMs);
        } catch (err) {
          this.log.warn({ err }, 'bridge: target not dialed');
          settle({ ok: false, status: 0, reason: 'not_dialed' });
        }
      })();
    });
  }

  /**
   * Lets go of the target: CANCEL before an answer, BYE after, its media
   * closed (bounded). Resolves with the target's media figures. Idempotent.
   */
  end(): Promise<NetworkQuality | undefined> {
    this.ending ??= this.endNow();
    return this.ending;
  }

  private async endNow(): Promise<NetworkQuality | undefined> {
    this.timers.clearTimeout(this.waitTimer);
    if (this.answered) this.byeTarget();
    else this.cancelTarget();
    await Promise.resolve();
    const media = this.targetMedia;
    if (!media) return undefined;
    this.targetMedia = undefined;
    let timer: unknown;
    const timeout = new Promise<undefined>(
      (resolve) =>
        (timer = this.timers.setTimeout(() => resolve(undefined), MEDIA_CLOSE_TIMEOUT_MS)),
    );
    try {
      const closed = await Promise.race([media.close('transfer_ended'), timeout]);
      return closed?.networkQuality;
    } catch (err) {
      this.log.warn({ err }, 'bridge: target media failed to close');
      return undefined;
    } finally {
      this.timers.clearTimeout(timer);
    }
  }

  /** The target's media figures now (while bridged). */
  stats(): NetworkQuality | undefined {
    try {
      return this.targetMedia?.stats();
    } catch {
      return undefined;
    }
  }

  private cancelTarget(): void {
    if (!this.leg || this.legOver) return;
    this.legOver = true;
    try {
      this.leg.cancel();
    } catch (err) {
      this.log.warn({ err }, 'bridge: CANCEL of the target failed');
    }
  }

  private byeTarget(): void {
    if (!this.leg || this.legOver) return;
    this.legOver = true;
    this.leg.bye().catch((err: unknown) => this.log.warn({ err }, 'bridge: BYE to target failed'));
  }
}

/**
 * The callee's media leg as the agent sees it: until `detach()`, everything
 * passes through; after it, the agent hears nothing and what it sends is
 * dropped (the legs are bridged to each other).
 */
export class AgentMediaGate implements MediaLeg {
  private open = true;
  /** `inner`: the callee's media leg itself. */
  constructor(readonly inner: MediaLeg) {}

  detach(): void {
    this.open = false;
  }
  get localPort(): number {
    return this.inner.localPort;
  }
  get localAddress(): string {
    return this.inner.localAddress;
  }
  createOffer(): string {
    return this.inner.createOffer();
  }
  applyAnswer(sdp: string): ReturnType<MediaLeg['applyAnswer']> {
    return this.inner.applyAnswer(sdp);
  }
  answerOffer(sdp: string): string {
    return this.inner.answerOffer(sdp);
  }
  onAudio(handler: (frame: ReceivedFrame) => void): void {
    this.inner.onAudio((f) => {
      if (this.open) handler(f);
    });
  }
  enqueue(audio: Uint8Array | Int16Array, sampleRate?: number): number {
    return this.open ? this.inner.enqueue(audio, sampleRate) : 0;
  }
  mark(name: string): void {
    if (this.open) this.inner.mark(name);
  }
  clear(): { droppedMs: number; droppedMarks: string[] } {
    return this.open ? this.inner.clear() : { droppedMs: 0, droppedMarks: [] };
  }
  sendDtmf(digits: string): void {
    if (this.open) this.inner.sendDtmf(digits);
  }
  stats(): NetworkQuality {
    return this.inner.stats();
  }
  on(event: 'dtmf', listener: (e: MediaLegEvents['dtmf']) => void): unknown;
  on(event: 'mark', listener: (name: string) => void): unknown;
  on(event: 'stats', listener: (q: NetworkQuality) => void): unknown;
  on(event: 'inactive', listener: (e: MediaLegEvents['inactive']) => void): unknown;
  on(event: 'dtmf' | 'mark' | 'stats' | 'inactive', listener: (e: never) => void): unknown {
    return (this.inner.on as (e: string, l: (e: never) => void) => unknown).call(
      this.inner,
      event,
      listener,
    );
  }
  close(
    reason?: string,
  ): Promise<{ networkQuality: NetworkQuality; recording: { fileId: string } | null }> {
    return this.inner.close(reason);
  }
}
