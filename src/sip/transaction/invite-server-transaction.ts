// INVITE server transaction, RFC 3261 §17.2.1 with RFC 6026 §7.1 / §8.7
// (2xx → Accepted, Timer L). The 2xx retransmissions of §13.3.1.4 belong to
// the UAS core; this class runs them on its behalf until `ackReceived()`.

import type { SipRequest, SipResponse } from '../message/types.js';
import type { TimerHandle } from '../transport/clock.js';
import type { Endpoint } from '../transport/types.js';
import type {
  ServerTransaction,
  ServerTransactionState,
  TransactionContext,
} from './transaction-types.js';

export class InviteServerTransaction implements ServerTransaction {
  state: ServerTransactionState = 'proceeding';
  /** To tag of the final response, for RFC 2543 ACK matching (§17.2.3). */
  responseToTag: string | undefined;
  private last: Buffer | undefined;
  private timerG: TimerHandle | undefined;
  private timerHL: TimerHandle | undefined;
  private timerI: TimerHandle | undefined;
  private timer100: TimerHandle | undefined;
  private intervalG: number;
  private readonly reliable: boolean;
  /** Called when Timer H fires: no ACK ever came (§17.2.1). */
  onAckTimeout: (() => void) | undefined;

  constructor(
    private readonly ctx: TransactionContext,
    readonly key: string,
    readonly request: SipRequest,
    private readonly destination: Endpoint,
    trying: SipResponse,
  ) {
    this.reliable = destination.transport !== 'udp';
    this.intervalG = ctx.timers.TIMER_G;
    // §17.2.1: send 100 Trying unless the TU answers within 200 ms.
    this.timer100 = ctx.clock.setTimer(() => {
      this.timer100 = undefined;
      if (this.state === 'proceeding' && !this.last) this.respond(trying);
    }, 200);
  }

  respond(res: SipResponse): void {
    if (this.state !== 'proceeding') return;
    if (this.timer100 !== undefined) this.ctx.clock.clearTimer(this.timer100);
    this.timer100 = undefined;
    this.last = this.ctx.transport.send(res, this.destination);
    const { clock, timers } = this.ctx;
    if (res.status < 200) return;
    this.responseToTag = toTag(res);
    if (res.status < 300) {
      // RFC 6026 §8.7: 2xx → Accepted, Timer L; §13.3.1.4 retransmit until ACK.
      this.state = 'accepted';
      if (!this.reliable) this.timerG = clock.setTimer(this.fireG, this.intervalG);
      this.timerHL = clock.setTimer(this.terminate, timers.TIMER_L);
      return;
    }
    // §17.2.1: 300-699 → Completed, Timer G (unreliable) and Timer H.
    this.state = 'completed';
    if (!this.reliable) this.timerG = clock.setTimer(this.fireG, this.intervalG);
    this.timerHL = clock.setTimer(this.fireH, timers.TIMER_H);
  }

  receiveRequest(req: SipRequest): void {
    if (req.method === 'ACK') {
      if (this.state !== 'completed') return;
      // §17.2.1: ACK → Confirmed, Timer I (T4, 0 on reliable transports).
      this.state = 'confirmed';
      this.clearG();
      this.clearHL();
      this.timerI = this.ctx.clock.setTimer(
        this.terminate,
        this.reliable ? 0 : this.ctx.timers.TIMER_I,
      );
      return;
    }
    // §17.2.1: a retransmitted INVITE gets the last response again.
    this.ctx.stats.retransmissionsIn++;
    if (
      this.last &&
      (this.state === 'proceeding' || this.state === 'completed' || this.state === 'accepted')
    ) {
      this.ctx.stats.retransmissionsOut++;
      this.ctx.transport.sendBuffer(this.last, this.destination);
    }
  }

  /** The UAS core saw the ACK for our 2xx: stop retransmitting it. */
  ackReceived(): void {
    if (this.state === 'accepted') this.clearG();
  }

  dispose(): void {
    this.clearG();
    this.clearHL();
    const clock = this.ctx.clock;
    if (this.timerI !== undefined) clock.clearTimer(this.timerI);
    if (this.timer100 !== undefined) clock.clearTimer(this.timer100);
    this.timerI = undefined;
    this.timer100 = undefined;
    this.state = 'terminated';
  }

  private clearG(): void {
    if (this.timerG !== undefined) this.ctx.clock.clearTimer(this.timerG);
    this.timerG = undefined;
  }

  private clearHL(): void {
    if (this.timerHL !== undefined) this.ctx.clock.clearTimer(this.timerHL);
    this.timerHL = undefined;
  }

  private readonly fireG = (): void => {
    if ((this.state !== 'completed' && this.state !== 'accepted') || !this.last) return;
    this.ctx.stats.retransmissionsOut++;
    this.ctx.transport.sendBuffer(this.last, this.destination);
    // §17.2.1 / §13.3.1.4: doubles up to T2.
    this.intervalG = Math.min(2 * this.intervalG, this.ctx.timers.T2);
    this.timerG = this.ctx.clock.setTimer(this.fireG, this.intervalG);
  };

  private readonly fireH = (): void => {
    this.ctx.stats.transactionTimeouts++;
    this.terminate();
    this.onAckTimeout?.();
  };

  private readonly terminate = (): void => {
    if (this.state === 'terminated') return;
    this.dispose();
    this.ctx.terminated(this.key, this);
  };
}

function toTag(res: SipResponse): string | undefined {
  const to = res.headers.find((h) => h.name === 'to');
  const m = to ? /;\s*tag=([^;>\s]+)/i.exec(to.value) : null;
  return m?.[1];
}
