// What a transaction needs from the layers around it.

import type { SipRequest, SipResponse } from '../message/types.js';
import type { Clock } from '../transport/clock.js';
import type { SipStats } from '../transport/stats.js';
import type { Endpoint, SendErrorHandler } from '../transport/types.js';
import type { TimerValues } from './timers.js';

/** The slice of the transport layer transactions use (a fake in tests). */
export interface TransactionTransport {
  /** Serialises and sends; returns the bytes so retransmissions reuse them. */
  send(msg: SipRequest | SipResponse, dest: Endpoint, onError?: SendErrorHandler): Buffer;
  sendBuffer(buf: Buffer, dest: Endpoint, onError?: SendErrorHandler): void;
}

export interface TransactionContext {
  transport: TransactionTransport;
  clock: Clock;
  timers: TimerValues;
  stats: SipStats;
  /** Called once when a transaction reaches Terminated. */
  terminated(key: string, tx: unknown): void;
}

/** The transaction user (UA core, dialog) of a client transaction. */
export interface ClientTransactionUser {
  onResponse(res: SipResponse): void;
  /** Timer B or F fired (RFC 3261 §17.1.1.2, §17.1.2.2). */
  onTimeout(): void;
  /** RFC 3261 §17.1.4: the transport reported a failure. */
  onTransportError(err: Error): void;
}

export type ClientTransactionState =
  'calling' | 'trying' | 'proceeding' | 'completed' | 'accepted' | 'terminated';

export type ServerTransactionState =
  'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

export interface ClientTransaction {
  readonly key: string;
  readonly request: SipRequest;
  readonly destination: Endpoint;
  readonly state: ClientTransactionState;
  receiveResponse(res: SipResponse): void;
  /** Stops timers without telling the user (stack shutdown). */
  dispose(): void;
}

export interface ServerTransaction {
  readonly key: string;
  readonly request: SipRequest;
  readonly state: ServerTransactionState;
  /** Sends a response through the transaction. */
  respond(res: SipResponse): void;
  receiveRequest(req: SipRequest): void;
  dispose(): void;
}
