// The transfer target's own leg (issue 24 items 3 and 4): the destination
// dialed as a second leg through the call's trunk, with its own media
// session. Answered, its media joins the call's MediaRoutes: bridged to the
// callee at once (a refused REFER's fallback) or talking to the agent (a
// warm or attended consult, bridged later by `merge`). The session owns it:
// `end()` lets go of the target's leg and media on every path (CANCEL before
// the answer, BYE after, the media closed once).
import type { Logger } from 'pino';
import type { NetworkQuality } from '../../model/call-record.js';
import type { MediaLeg, MediaPort, SrtpMode } from '../ports/media-port.js';
import type {
  DialogSnapshot,
  DialRequest,
  SignalingLeg,
  SignalingPort,
} from '../ports/signaling-port.js';
import type { Timers } from '../timers.js';
import type { MediaRoutes } from './media-routes.js';
import type { TargetLegDetails } from './transfer-record.js';

/** How the target's leg came out. */
export type BridgeDialResult =
  { ok: true; callId: string } | { ok: false; status: number; reason: string; noAnswer?: boolean };

/** A dial of the target as the transfer writes it: the outcome and the leg's details. */
export type TargetDial = BridgeDialResult & { leg?: TargetLegDetails };

const MEDIA_CLOSE_TIMEOUT_MS = 2000;

/** On the target's answer: bridge it to the callee, or let the agent consult it first. */
export type OnAnswer = 'bridge' | 'consult';

export interface BridgeHooks {
  /** The target's phone rings (a 180 or 183). */
  ringing?(): void;
  /** The target hung up (or its leg failed) after the answer. */
  targetEnded(): void;
  /** The target's dialog confirmed or changed: keep it for a BYE after a crash. */
  dialog?(dialog: DialogSnapshot): void;
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
  /** The target's Request-URI, as dialed. */
  private requestUri: string | undefined;
  /** The target's confirmed dialog (its tags: what a Replaces names). */
  private dialog: DialogSnapshot | undefined;

  constructor(
    private readonly signaling: SignalingPort,
    private readonly media: MediaPort,
    private readonly timers: Timers,
    private readonly log: Logger,
    /** Who hears whom in this call. */
    private readonly routes: MediaRoutes,
    private readonly hooks: BridgeHooks,
    private readonly now: () => string,
  ) {}

  /** True once the target answered and the two legs are bridged. */
  get bridged(): boolean {
    return this.answered && this.routes.bridged;
  }

  /** True while the target is answered and its leg up. */
  get connected(): boolean {
    return this.answered && !this.legOver;
  }

  /**
   * The target's URI with a Replaces header naming our dialog with it (RFC
   * 3891 §3: to-tag is the target's own tag, from-tag ours; RFC 3261 §19.1.1
   * escaping of the header value), for a REFER that hands the callee to the
   * target directly (attended transfer, RFC 5589 §7). Undefined when the
   * target is not answered or its dialog is unknown.
   */
  replacesUri(): string | undefined {
    const d = this.dialog;
    if (!this.connected || !d || !this.requestUri) return undefined;
    const replaces = `${d.callId};to-tag=${d.remoteTag};from-tag=${d.localTag}`;
    return `${this.requestUri}?Replaces=${encodeURIComponent(replaces)}`;
  }

  /** A consulted target joins the callee; the agent leaves the media path. False when it is gone. */
  merge(): boolean {
    if (!this.connected) return false;
    this.routes.bridge();
    return true;
  }

  /**
   * Dials the target; resolves when it answered (bridged), failed, or did
   * not answer within `waitMs` (CANCEL sent). Never rejects.
   */
  dial(
    build: (sdp: string) => Omit<DialRequest, 'answerOffer' | 'onSending'>,
    waitMs: number,
    onAnswer: OnAnswer,
    srtp: SrtpMode = 'rtp',
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
          const targetMedia = await this.media.createSession({ srtp });
          if (this.ending) {
            // The call ended while the media session was being made: it goes at once.
            targetMedia
              .close('transfer_ended')
              .catch((err: unknown) => this.log.warn({ err }, 'bridge: target media not closed'));
            return settle({ ok: false, status: 0, reason: 'call_ended' });
          }
          this.targetMedia = targetMedia;
          // No RTP from an answered target for the engine's inactivity time: it is gone (BYE sent).
          targetMedia.on('inactive', (e) => {
            if (!this.answered || this.legOver || this.ending) return;
            this.log.warn({ silentForMs: e.silentForMs }, 'bridge: no RTP from the target');
            this.byeTarget();
            this.hooks.targetEnded();
          });
          const request = build(targetMedia.createOffer());
          this.requestUri = request.requestUri;
          const leg = this.signaling.invite({
            ...request,
            answerOffer: (o) => targetMedia.answerOffer(o.sdp),
            onSending: () => {
              this.inviteSentAt = this.now();
            },
            onDialog: (d) => {
              this.dialog = d;
              this.hooks.dialog?.(d);
            },
          });
          this.leg = leg;
          leg.on('provisional', (p) => {
            if (!this.settled && (p.status === 180 || p.status === 183)) this.hooks.ringing?.();
          });
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
              this.routes.attachTarget(targetMedia);
              if (onAnswer === 'bridge') this.routes.bridge();
              else this.routes.agentTo('target');
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
    this.routes.detachTarget();
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
