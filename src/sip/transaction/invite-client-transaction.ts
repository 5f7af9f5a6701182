// INVITE client transaction, RFC 3261 §17.1.1 with RFC 6026 §7.2 / §8.4
// (2xx → Accepted, Timer M).

import type { SipRequest, SipResponse } from '../message/types.js';
import type { TimerHandle } from '../transport/clock.js';
import type { Endpoint } from '../transport/types.js';
import { buildNon2xxAck } from './build-ack.js';
import type {
  ClientTransaction,
  ClientTransactionState,
  ClientTransactionUser,
  TransactionContext,
} from './transaction-types.js';

export class InviteClientTransaction implements ClientTransaction {
  state: ClientTransactionState = 'calling';
  private buf: Buffer | undefined;
  private ackBuf: Buffer | undefined;
  private timerA: TimerHandle | undefined;
  private timerB: TimerHandle | undefined;
  private timerDM: TimerHandle | undefined;
  private intervalA: number;
  private readonly reliable: boolean;

  constructor(
    private readonly ctx: TransactionContext,
    readonly key: string,
    readonly request: SipRequest,
    readonly destination: Endpoint,
    private readonly tu: ClientTransactionUser,
  ) {
    this.reliable = destination.transport !== 'udp';
    this.intervalA = ctx.timers.TIMER_A;
  }

  start(): void {
    const { clock, timers } = this.ctx;
    this.buf = this.ctx.transport.send(this.request, this.destination, this.onError);
    // §17.1.1.2: Timer A only for unreliable transports; Timer B = 64*T1 always.
    if (!this.reliable) this.timerA = clock.setTimer(this.fireA, this.intervalA);
    this.timerB = clock.setTimer(this.fireB, timers.TIMER_B);
  }

  receiveResponse(res: SipResponse): void {
    const status = res.status;
    switch (this.state) {
      case 'calling':
      case 'proceeding':
        if (status < 200) {
          // §17.1.1.2: a provisional response stops retransmissions (and B).
          this.state = 'proceeding';
          this.clearAB();
          this.tu.onResponse(res);
        } else if (status < 300) {
          // RFC 6026 §8.4: 2xx → Accepted; later 2xx (retransmissions, forks) go to the TU.
          this.state = 'accepted';
          this.clearAB();
          this.timerDM = this.ctx.clock.setTimer(this.terminate, this.ctx.timers.TIMER_M);
          this.tu.onResponse(res);
        } else {
          // §17.1.1.2: 300-699 → Completed, ACK, Timer D (0 on reliable transports).
          this.state = 'completed';
          this.clearAB();
          this.ackBuf = this.ctx.transport.send(
            buildNon2xxAck(this.request, res),
            this.destination,
          );
          const d = this.reliable ? 0 : this.ctx.timers.TIMER_D;
          this.timerDM = this.ctx.clock.setTimer(this.terminate, d);
          this.tu.onResponse(res);
        }
        return;
      case 'completed':
        // §17.1.1.2: a retransmitted final response gets the ACK again.
        if (status >= 300 && this.ackBuf) {
          this.ctx.stats.retransmissionsIn++;
          this.ctx.stats.retransmissionsOut++;
          this.ctx.transport.sendBuffer(this.ackBuf, this.destination);
        }
        return;
      case 'accepted':
        if (status >= 200 && status < 300) this.tu.onResponse(res);
        return;
      default:
        return;
    }
  }

  dispose(): void {
    this.clearAB();
    if (this.timerDM !== undefined) this.ctx.clock.clearTimer(this.timerDM);
    this.timerDM = undefined;
    this.state = 'terminated';
  }

  private clearAB(): void {
    const clock = this.ctx.clock;
    if (this.timerA !== undefined) clock.clearTimer(this.timerA);
    if (this.timerB !== undefined) clock.clearTimer(this.timerB);
    this.timerA = undefined;
    this.timerB = undefined;
  }

  private readonly fireA = (): void => {
    if (this.state !== 'calling' || !this.buf) return;
    this.ctx.stats.retransmissionsOut++;
    this.ctx.transport.sendBuffer(this.buf, this.destination, this.onError);
    this.intervalA *= 2; // §17.1.1.2: Timer A doubles each time
    this.timerA = this.ctx.clock.setTimer(this.fireA, this.intervalA);
  };

  private readonly fireB = (): void => {
    if (this.state !== 'calling') return;
    this.ctx.stats.transactionTimeouts++;
    this.terminate();
    this.tu.onTimeout();
  };

  private readonly onError = (err: Error): void => {
    if (this.state !== 'calling' && this.state !== 'proceeding') return;
    this.terminate();
    this.tu.onTransportError(err);
  };

  private readonly terminate = (): void => {
    if (this.state === 'terminated') return;
    this.dispose();
    this.ctx.terminated(this.key, this);
  };
}
