// A SIP leg the test drives (a SignalingLeg): the test fires what the far end
// sends; the leg records the CANCEL and BYE we asked of it, and answers them
// the way a SIP stack reports them (487 for our CANCEL, `ended` for our BYE).
import { EventEmitter } from 'node:events';
import type {
  DialRequest,
  LegEvents,
  ReferOutcome,
  ReferProgress,
  ReferRequest,
  SignalingLeg,
} from '../../ports/signaling-port.js';

/**
 * What the far end does with our REFER: the NOTIFY sipfrags it reports (in
 * order, each a microtask apart), then the outcome; `hold` leaves the REFER
 * pending until the test calls `progressRefer` / `finishRefer`.
 */
export type ReferScript =
  | { progress?: ReferProgress[]; outcome: ReferOutcome }
  | { hold: true; progress?: ReferProgress[] };

export class FakeLeg extends EventEmitter implements SignalingLeg {
  readonly callId = `sip-${Math.random().toString(36).slice(2)}`;
  cancels = 0;
  get cancelled(): boolean {
    return this.cancels > 0;
  }
  byes: Array<{ q850?: number; text?: string } | undefined> = [];

  constructor(readonly request: DialRequest) {
    super();
  }

  override on<K extends keyof LegEvents & string>(
    event: K,
    listener: (e: LegEvents[K]) => void,
  ): this {
    return super.on(event, listener);
  }

  fire<K extends keyof LegEvents & string>(event: K, e: LegEvents[K]): void {
    this.emit(event, e);
  }

  cancel(): void {
    this.cancels++;
    queueMicrotask(() =>
      this.fire('failed', { status: 487, reason: 'Request Terminated', cause: 'cancelled' }),
    );
  }

  /** What the in-dialog probe answers (0: nothing came back). */
  probeStatus = 200;
  probes = 0;

  async probe(): Promise<number> {
    this.probes++;
    return this.probeStatus;
  }

  /** The REFERs sent, with the wait asked for. */
  refers: Array<{ request: ReferRequest; timeoutMs?: number }> = [];
  referScript: ReferScript = {
    progress: [{ status: 100, reason: 'Trying' }],
    outcome: { kind: 'transferred', status: 200, reason: 'OK' },
  };
  private pendingRefer:
    { resolve: (o: ReferOutcome) => void; onProgress?: (p: ReferProgress) => void } | undefined;

  /** Blind transfer as the SIP engines do it (set to undefined: an engine without REFER). */
  refer?: SignalingLeg['refer'] = (request, onProgress, timeoutMs) => {
    if (this.pendingRefer) return Promise.reject(new Error('a REFER is already pending'));
    this.refers.push({ request, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
    const script = this.referScript;
    return new Promise<ReferOutcome>((resolve) => {
      this.pendingRefer = { resolve, ...(onProgress ? { onProgress } : {}) };
      void (async () => {
        for (const p of script.progress ?? []) {
          await Promise.resolve();
          this.progressRefer(p);
        }
        await Promise.resolve();
        if ('outcome' in script) this.finishRefer(script.outcome);
      })();
    });
  };

  /** A NOTIFY with a provisional sipfrag for the pending REFER. */
  progressRefer(p: ReferProgress): void {
    this.pendingRefer?.onProgress?.(p);
  }

  /** The pending REFER's outcome. */
  finishRefer(o: ReferOutcome): void {
    const pending = this.pendingRefer;
    this.pendingRefer = undefined;
    pending?.resolve(o);
  }

  /** When true, our BYE is never answered: the leg never ends by itself. */
  holdBye = false;

  async bye(reason?: { q850?: number; text?: string }): Promise<void> {
    this.byes.push(reason);
    if (this.holdBye) return;
    queueMicrotask(() => this.fire('ended', { by: 'local' }));
  }
}
