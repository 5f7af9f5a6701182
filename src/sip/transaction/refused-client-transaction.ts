// A request of ours refused because the client transaction budget is spent:
// nothing is sent, and the user hears a local 503 (RFC 3261 §8.1.3.1 lets a
// UAC treat its own failure to send like a 503) on the next turn of the
// clock, after sendRequest() has returned, as a real response would arrive.

import { getHeader } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import type { TimerHandle } from '../transport/clock.js';
import type { Endpoint } from '../transport/types.js';
import { createResponse } from './create-response.js';
import type {
  ClientTransaction,
  ClientTransactionState,
  ClientTransactionUser,
  TransactionContext,
} from './transaction-types.js';

const LOCAL_REFUSAL_WARNING = '399 gateway "local client transaction budget reached"';

/** True for the 503 this stack made up itself (nothing was sent), not one a peer answered. */
export function isLocalRefusal(res: SipResponse): boolean {
  return res.status === 503 && getHeader(res, 'warning') === LOCAL_REFUSAL_WARNING;
}

export class RefusedClientTransaction implements ClientTransaction {
  state: ClientTransactionState = 'terminated';
  private timer: TimerHandle | undefined;

  constructor(
    ctx: TransactionContext,
    readonly key: string,
    readonly request: SipRequest,
    readonly destination: Endpoint,
    tu: ClientTransactionUser,
  ) {
    const res = createResponse(request, 503, 'Service Unavailable', {
      headers: [['warning', LOCAL_REFUSAL_WARNING]],
    });
    this.timer = ctx.clock.setTimer(() => {
      this.timer = undefined;
      tu.onResponse(res);
    }, 0);
    this.dispose = () => {
      if (this.timer !== undefined) ctx.clock.clearTimer(this.timer);
      this.timer = undefined;
    };
  }

  receiveResponse(): void {}

  dispose: () => void;
}
