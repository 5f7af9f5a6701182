// Answers a request without a transaction (RFC 3261 §8.2.7, stateless UAS):
// one final response, no provisional, no retransmission, nothing kept. The
// edge uses it for OPTIONS, strangers and requests over the budget, so that
// what a flood costs us is one send per datagram at most.

import { createHash } from 'node:crypto';
import { getHeader, getHeaders } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import type { SipStats } from '../transport/stats.js';
import type { Endpoint } from '../transport/types.js';
import type {
  ServerTransaction,
  ServerTransactionState,
  TransactionTransport,
} from './transaction-types.js';

export class StatelessResponder implements ServerTransaction {
  readonly key = '';
  state: ServerTransactionState = 'trying';
  /** §8.2.7: the same request always gets the same To tag. */
  readonly toTag: string;

  constructor(
    private readonly transport: TransactionTransport,
    private readonly stats: SipStats,
    readonly request: SipRequest,
    private readonly destination: Endpoint,
  ) {
    this.toTag = statelessTag(request);
  }

  /** Sends the first final response; §8.2.7: a stateless UAS sends no 1xx. */
  respond(res: SipResponse): void {
    if (this.state !== 'trying' || res.status < 200) return;
    this.state = 'terminated';
    this.stats.statelessResponses++;
    this.transport.send(res, this.destination);
  }

  receiveRequest(_req: SipRequest): void {}

  dispose(): void {
    this.state = 'terminated';
  }
}

export function isStateless(tx: ServerTransaction): tx is StatelessResponder {
  return tx instanceof StatelessResponder;
}

/** A To tag computed from what identifies the request (§8.2.7: "in a
 *  stateless manner"), so a retransmission gets the same response. */
function statelessTag(req: SipRequest): string {
  const h = createHash('sha1');
  h.update(getHeaders(req, 'via')[0] ?? '');
  h.update('\n');
  h.update(getHeader(req, 'call-id') ?? '');
  h.update('\n');
  h.update(getHeader(req, 'from') ?? '');
  h.update('\n');
  h.update(getHeader(req, 'cseq') ?? '');
  return h.digest('hex').slice(0, 16);
}
