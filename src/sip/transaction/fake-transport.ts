// An in-memory transport for transaction tests: records what was sent.

import { serializeMessage } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import type { Endpoint, SendErrorHandler } from '../transport/types.js';
import type { TransactionTransport } from './transaction-types.js';

export interface SentRecord {
  text: string;
  dest: Endpoint;
}

export class FakeTransport implements TransactionTransport {
  readonly sent: SentRecord[] = [];
  /** When set, the next send reports this error. */
  failNext: Error | undefined;

  send(msg: SipRequest | SipResponse, dest: Endpoint, onError?: SendErrorHandler): Buffer {
    const buf = serializeMessage(msg);
    this.sendBuffer(buf, dest, onError);
    return buf;
  }

  sendBuffer(buf: Buffer, dest: Endpoint, onError?: SendErrorHandler): void {
    this.sent.push({ text: buf.toString(), dest });
    const err = this.failNext;
    if (err && onError) {
      this.failNext = undefined;
      queueMicrotask(() => onError(err));
    }
  }

  /** First lines of what was sent, e.g. "INVITE sip:…" or "SIP/2.0 100 Trying". */
  startLines(): string[] {
    return this.sent.map((s) => s.text.slice(0, s.text.indexOf('\r\n')));
  }
}
