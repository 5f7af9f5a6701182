// Non-INVITE client transaction, RFC 3261 §17.1.2.

import type { SipRequest, SipResponse } from '../message/types.js';
import type { TimerHandle } from '../transport/clock.js';
import type { Endpoint } from '../transport/types.js';
import type {
  ClientTransaction,
  ClientTransactionState,
  ClientTransactionUser,
  TransactionContext,
} from './transaction-types.js';

export class NonInviteClientTransaction implements ClientTransaction {
  state: ClientTransactionState = 'trying';
  private buf: Buffer | undefined;
  private timerE: TimerHandle | undefined;
  private timerF: TimerHandle | undefined;
  private timerK: TimerHandle | undefined;
  private intervalE: number;
  private readonly reliable: boolean;

  constructor(
    private readonly ctx: TransactionContext,
    readonly key: string,
    readonly request: SipRequest,
    readonly destination: Endpoint,
    private readonly tu: ClientTransactionUser,
  ) {
    this.reliable = destination.transport !== 'udp';
    this.intervalE = ctx.timers.TIMER_E;
  }

  start(): void {
    const clock = this.ctx.clock;
    this.buf = this.ctx.transport.send(this.request, this.destination, this.onError);
    // §17.1.2.2: Timer E only on unreliable transports, Timer F always.
    if (!this.reliable) this.timerE = clock.setTimer(this.fireE, this.intervalE);
    this.timerF = clock.setTimer(this.fireF, this.ctx.timers.TIMER_F);
  }

  receiveResponse(res: SipResponse): void {
    if (this.state !== 'trying' && this.state !== 'proceeding') {
      if (this.state === 'completed') this.ctx.stats.retransmissionsIn++;
      return; // §17.1.2.2: Completed absorbs retransmitted responses
    }
    if (res.status < 200) {
      this.state = 'proceeding';
      this.tu.onResponse(res);
      return;
    }
    this.state = 'completed';
    this.clearEF();
    // §17.1.2.2: Timer K = T4 for UDP, 0 for reliable transports.
    this.timerK = this.ctx.clock.setTimer(
      this.terminate,
      this.reliable ? 0 : this.ctx.timers.TIMER_K,
    );
    this.tu.onResponse(res);
  }

  dispose(): void {
    this.clearEF();
    if (this.timerK !== undefined) this.ctx.clock.clearTimer(this.timerK);
    this.timerK = undefined;
    this.state = 'terminated';
  }

  private clearEF(): void {
    const clock = this.ctx.clock;
    if (this.timerE !== undefined) clock.clearTimer(this.timerE);
    if (this.timerF !== undefined) clock.clearTimer(this.timerF);
    this.timerE = undefined;
    this.timerF = undefined;
  }

  private readonly fireE = (): void => {
    if ((this.state !== 'trying' && this.state !== 'proceeding') || !this.buf) return;
    this.ctx.stats.retransmissionsOut++;
    this.ctx.transport.sendBuffer(this.buf, this.destination, this.onError);
    const { T2 } = this.ctx.timers;
    // §17.1.2.2: E doubles up to T2 in Trying; it is T2 in Proceeding.
    this.intervalE = this.state === 'proceeding' ? T2 : Math.min(2 * this.intervalE, T2);
    this.timerE = this.ctx.clock.setTimer(this.fireE, this.intervalE);
  };

  private readonly fireF = (): void => {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.ctx.stats.transactionTimeouts++;
    this.terminate();
    this.tu.onTimeout();
  };

  private readonly onError = (err: Error): void => {
    if (this.state !== 'trying' && this.state !== 'proceeding') return;
    this.terminate();
    this.tu.onTransportError(err);
  };

  private readonly terminate = (): void => {
    if (this.state === 'terminated') return;
    this.dispose();
    this.ctx.terminated(this.key, this);
  };
}
