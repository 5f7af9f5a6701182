// A SIP leg the test drives (a SignalingLeg): the test fires what the far end
// sends; the leg records the CANCEL and BYE we asked of it, and answers them
// the way a SIP stack reports them (487 for our CANCEL, `ended` for our BYE).
import { EventEmitter } from 'node:events';
import type { DialRequest, LegEvents, SignalingLeg } from '../../ports/signaling-port.js';

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

  async bye(reason?: { q850?: number; text?: string }): Promise<void> {
    this.byes.push(reason);
    queueMicrotask(() => this.fire('ended', { by: 'local' }));
  }
}
