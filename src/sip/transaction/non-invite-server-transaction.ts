// Non-INVITE server transaction, RFC 3261 §17.2.2.

import type { SipRequest, SipResponse } from '../message/types.js';
import type { TimerHandle } from '../transport/clock.js';
import type { Endpoint } from '../transport/types.js';
import type {
  ServerTransaction,
  ServerTransactionState,
  TransactionContext,
} from './transaction-types.js';

export class NonInviteServerTransaction implements ServerTransaction {
  state: ServerTransactionState = 'trying';
  private last: Buffer | undefined;
  private timerJ: TimerHandle | undefined;

  constructor(
    private readonly ctx: TransactionContext,
    readonly key: string,
    readonly request: SipRequest,
    private readonly destination: Endpoint,
  ) {}

  respond(res: SipResponse): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.last = this.ctx.transport.send(res, this.destination);
    if (res.status < 200) {
      this.state = 'proceeding';
      return;
    }
    // §17.2.2: final → Completed, Timer J = 64*T1 (0 on reliable transports).
    this.state = 'completed';
    const j = this.destination.transport === 'udp' ? this.ctx.timers.TIMER_J : 0;
    this.timerJ = this.ctx.clock.setTimer(this.terminate, j);
  }

  receiveRequest(_req: SipRequest): void {
    this.ctx.stats.retransmissionsIn++;
    // §17.2.2: Trying absorbs; Proceeding/Completed resend the last response.
    if (this.last && (this.state === 'proceeding' || this.state === 'completed')) {
      this.ctx.stats.retransmissionsOut++;
      this.ctx.transport.sendBuffer(this.last, this.destination);
    }
  }

  dispose(): void {
    if (this.timerJ !== undefined) this.ctx.clock.clearTimer(this.timerJ);
    this.timerJ = undefined;
    this.state = 'terminated';
  }

  private readonly terminate = (): void => {
    if (this.state === 'terminated') return;
    this.dispose();
    this.ctx.terminated(this.key, this);
  };
}
