// What a call leg needs from the stack that owns it.

import type { SipResponse } from '../message/types.js';
import type { TransactionLayer } from '../transaction/transaction-layer.js';
import type { Clock } from '../transport/clock.js';
import type { SipLogger } from '../transport/logger.js';
import type { SipStats } from '../transport/stats.js';
import type { Endpoint, TransportProtocol } from '../transport/types.js';
import type { ResolvedSipConfig } from './config.js';

/** Answers 401/407 challenges for one leg (keeps nonce counts). */
export interface Authorizer {
  /** The Authorization/Proxy-Authorization line for a retry, or undefined
   *  when the challenge can't be answered. `stale` is the challenge's flag. */
  authorize(
    res: SipResponse,
    method: string,
    uri: string,
  ): { name: string; value: string; stale: boolean } | undefined;
}

export interface LegContext {
  tx: TransactionLayer;
  clock: Clock;
  stats: SipStats;
  config: ResolvedSipConfig;
  logger: SipLogger;
  /** "host:port" for Via sent-by. */
  sentBy(transport: TransportProtocol): string;
  /** Our Contact header value for a transport. */
  contact(transport: TransportProtocol): string;
  resolve(target: {
    host: string;
    port?: number;
    transport: TransportProtocol;
    tls?: { profile: string };
  }): Promise<Endpoint[]>;
  createAuthorizer(credentials: { username: string; password: string }): Authorizer;
  /** Dialog registry: requests whose To tag is `localTag` go to the leg. */
  register(key: string, leg: unknown): void;
  unregister(key: string, leg: unknown): void;
}
