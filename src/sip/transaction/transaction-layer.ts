// The transaction layer (RFC 3261 §17): creates transactions, matches
// incoming messages to them (§17.1.3, §17.2.3, with the RFC 2543 fallback of
// §17.2.3) and hands everything else to the transaction user above.

import { getHeader, getHeaders, parseCSeq, parseVia } from '../message/index.js';
import { SipParseError, type SipRequest, type SipResponse, type Via } from '../message/types.js';
import type { Clock } from '../transport/clock.js';
import type { SipStats } from '../transport/stats.js';
import { responseDestination } from '../transport/transport-layer.js';
import type { Endpoint } from '../transport/types.js';
import { createResponse } from './create-response.js';
import { InviteClientTransaction } from './invite-client-transaction.js';
import { InviteServerTransaction } from './invite-server-transaction.js';
import { NonInviteClientTransaction } from './non-invite-client-transaction.js';
import { NonInviteServerTransaction } from './non-invite-server-transaction.js';
import { RefusedClientTransaction } from './refused-client-transaction.js';
import { StatelessResponder } from './stateless-responder.js';
import type { TimerValues } from './timers.js';
import type {
  ClientTransaction,
  ClientTransactionUser,
  ServerTransaction,
  TransactionContext,
  TransactionTransport,
} from './transaction-types.js';

/** RFC 3261 §8.1.1.7 magic cookie of a branch built by a 3261 element. */
export const MAGIC_COOKIE = 'z9hG4bK';

/** A request no transaction absorbed: a new server transaction (undefined
 *  for an ACK, i.e. the ACK of a 2xx, §17.2.3 / §13.2.2.4). */
export type RequestHandler = (
  req: SipRequest,
  source: Endpoint,
  tx: ServerTransaction | undefined,
) => void;
/** A response that matched no client transaction (e.g. a 2xx after Timer M). */
export type StrayResponseHandler = (res: SipResponse, source: Endpoint) => void;

/**
 * What a request that matched no transaction gets (the UA's edge policy):
 * `transaction` a server transaction while under the budget, `priority` one
 * even over it (in-dialog traffic of live calls, up to a reserve), `handled`
 * none (the hook answered statelessly or dropped it).
 */
export type Admission = 'transaction' | 'priority' | 'handled';
export type AdmissionHook = (
  req: SipRequest,
  source: Endpoint,
  budgetReached: boolean,
) => Admission;

export interface TransactionLayerOptions {
  clock: Clock;
  timers: TimerValues;
  stats: SipStats;
  /** Live server transactions before new out-of-dialog requests are refused; default unlimited. */
  maxServerTransactions?: number;
  /** Live client transactions before new out-of-dialog requests of ours fail with a local 503; default unlimited. */
  maxClientTransactions?: number;
}

/** Retry-After of the 503s the budgets cause, seconds. */
export const BUDGET_RETRY_AFTER_SECONDS = 5;

export class TransactionLayer {
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();
  private readonly ctx: TransactionContext;
  private onRequestCb: RequestHandler = () => undefined;
  private onStrayCb: StrayResponseHandler = () => undefined;
  private admitCb: AdmissionHook;
  private readonly maxServers: number;
  /** Priority (in-dialog) requests may use a reserve above the budget, never more. */
  private readonly hardMaxServers: number;
  private readonly maxClients: number;

  constructor(
    private readonly transport: TransactionTransport,
    opts: TransactionLayerOptions,
  ) {
    this.maxServers = opts.maxServerTransactions ?? Infinity;
    this.hardMaxServers = this.maxServers + Math.max(100, Math.ceil(this.maxServers / 10));
    this.maxClients = opts.maxClientTransactions ?? Infinity;
    this.admitCb = (req, source, full) =>
      full ? this.refuseOverBudget(req, source) : 'transaction';
    this.ctx = {
      transport,
      clock: opts.clock,
      timers: opts.timers,
      stats: opts.stats,
      terminated: (key, tx) => {
        if (this.clients.get(key) === tx) this.clients.delete(key);
        else if (this.servers.get(key) === tx) this.servers.delete(key);
      },
    };
  }

  get timers(): TimerValues {
    return this.ctx.timers;
  }

  onRequest(cb: RequestHandler): void {
    this.onRequestCb = cb;
  }

  onStrayResponse(cb: StrayResponseHandler): void {
    this.onStrayCb = cb;
  }

  /** Replaces the default admission (a stateless 503 at the budget). */
  onAdmission(cb: AdmissionHook): void {
    this.admitCb = cb;
  }

  /** The budgets (Infinity when unlimited). */
  get budget(): { serverTransactions: number; clientTransactions: number } {
    return { serverTransactions: this.maxServers, clientTransactions: this.maxClients };
  }

  /** A responder that answers `req` once without a transaction (§8.2.7). */
  stateless(req: SipRequest, source: Endpoint): StatelessResponder {
    return new StatelessResponder(
      this.transport,
      this.ctx.stats,
      req,
      responseDestination(req, source),
    );
  }

  /** The default over-budget answer: 503 with Retry-After, statelessly. */
  refuseOverBudget(req: SipRequest, source: Endpoint): 'handled' {
    this.stateless(req, source).respond(
      createResponse(req, 503, 'Service Unavailable', {
        headers: [['retry-after', String(BUDGET_RETRY_AFTER_SECONDS)]],
      }),
    );
    return 'handled';
  }

  /** Starts a client transaction. `branch` is the one in the request's top Via. */
  sendRequest(
    req: SipRequest,
    branch: string,
    dest: Endpoint,
    tu: ClientTransactionUser,
  ): ClientTransaction {
    const key = `${branch}\n${req.method}`;
    if (this.clients.size >= this.maxClients && startsSomething(req)) {
      // Our own requests that would start something new wait for room; those
      // of live calls (in a dialog, CANCEL) always go.
      this.ctx.stats.clientTransactionsRefused++;
      return new RefusedClientTransaction(this.ctx, key, req, dest, tu);
    }
    this.ctx.stats.transactionsCreated++;
    if (req.method === 'INVITE') {
      const tx = new InviteClientTransaction(this.ctx, key, req, dest, tu);
      this.clients.set(key, tx);
      tx.start();
      return tx;
    }
    const tx = new NonInviteClientTransaction(this.ctx, key, req, dest, tu);
    this.clients.set(key, tx);
    tx.start();
    return tx;
  }

  /** Sends outside any transaction (the ACK of a 2xx, §13.2.2.4). */
  sendStateless(msg: SipRequest | SipResponse, dest: Endpoint): Buffer {
    return this.transport.send(msg, dest);
  }

  sendBuffer(buf: Buffer, dest: Endpoint): void {
    this.transport.sendBuffer(buf, dest);
  }

  /** Entry point registered on the transport layer. */
  readonly handleMessage = (msg: SipRequest | SipResponse, source: Endpoint): void => {
    if (msg.kind === 'response') this.handleResponse(msg, source);
    else this.handleRequest(msg, source);
  };

  /** §9.2: the INVITE server transaction a CANCEL refers to. */
  findInviteServer(cancel: SipRequest): InviteServerTransaction | undefined {
    const via = topVia(cancel);
    const tx = this.servers.get(serverKey(cancel, via, 'INVITE'));
    return tx instanceof InviteServerTransaction ? tx : undefined;
  }

  /** Live transaction counts (tests, stats). */
  size(): { clients: number; servers: number } {
    return { clients: this.clients.size, servers: this.servers.size };
  }

  /** Stops every timer; transactions are dropped without telling their users. */
  stop(): void {
    for (const tx of this.clients.values()) tx.dispose();
    for (const tx of this.servers.values()) tx.dispose();
    this.clients.clear();
    this.servers.clear();
  }

  private handleResponse(res: SipResponse, source: Endpoint): void {
    // §17.1.3: top Via branch + CSeq method.
    const via = topVia(res);
    const cseq = parseCSeq(getHeader(res, 'cseq') ?? '');
    const tx = via.branch ? this.clients.get(`${via.branch}\n${cseq.method}`) : undefined;
    if (tx) {
      tx.receiveResponse(res);
      return;
    }
    this.ctx.stats.strayResponses++;
    this.onStrayCb(res, source);
  }

  private handleRequest(req: SipRequest, source: Endpoint): void {
    const via = topVia(req);
    const isAck = req.method === 'ACK';
    const key = serverKey(req, via, isAck ? 'INVITE' : req.method);
    let tx = this.servers.get(key);
    if (!tx && isAck && !isRfc3261Branch(via.branch)) tx = this.find2543Ack(req, via);
    if (tx) {
      tx.receiveRequest(req);
      return;
    }
    if (isAck) {
      this.onRequestCb(req, source, undefined);
      return;
    }
    const admission = this.admitCb(req, source, this.servers.size >= this.maxServers);
    if (admission === 'handled') return;
    const limit = admission === 'priority' ? this.hardMaxServers : this.maxServers;
    if (this.servers.size >= limit) return; // a hook that ignored the budget: drop
    const dest = responseDestination(req, source);
    this.ctx.stats.transactionsCreated++;
    let created: ServerTransaction;
    if (req.method === 'INVITE') {
      created = new InviteServerTransaction(
        this.ctx,
        key,
        req,
        dest,
        createResponse(req, 100, 'Trying'),
      );
    } else {
      created = new NonInviteServerTransaction(this.ctx, key, req, dest);
    }
    this.servers.set(key, created);
    this.onRequestCb(req, source, created);
  }

  /** §17.2.3: an RFC 2543 ACK matches the INVITE whose response carried its To tag. */
  private find2543Ack(ack: SipRequest, via: Via): ServerTransaction | undefined {
    const tag = tagOf(getHeader(ack, 'to'));
    const key = rfc2543Key(ack, via, 'INVITE', '');
    const tx = this.servers.get(key);
    if (tx instanceof InviteServerTransaction && tx.responseToTag === tag) return tx;
    return undefined;
  }
}

function topVia(msg: SipRequest | SipResponse): Via {
  const via = parseVia(getHeaders(msg, 'via')[0] ?? '')[0];
  if (!via) throw new SipParseError('message without Via', 400);
  return via;
}

/** A request of ours outside any dialog other than CANCEL (§9.1 belongs to its INVITE). */
function startsSomething(req: SipRequest): boolean {
  if (req.method === 'CANCEL' || req.method === 'ACK') return false;
  return tagOf(getHeader(req, 'to')) === undefined;
}

function isRfc3261Branch(branch: string | undefined): branch is string {
  return branch !== undefined && branch.startsWith(MAGIC_COOKIE);
}

/** §17.2.3: branch + sent-by + method (ACK matches INVITE), else the RFC 2543 rule. */
function serverKey(req: SipRequest, via: Via, method: string): string {
  if (isRfc3261Branch(via.branch)) return `${via.branch}\n${via.host}:${via.port ?? ''}\n${method}`;
  return rfc2543Key(req, via, method, tagOf(getHeader(req, 'to')) ?? '');
}

/** §17.2.3 (RFC 2543): Request-URI, To tag, From tag, Call-ID, CSeq, top Via. */
function rfc2543Key(req: SipRequest, via: Via, method: string, toTag: string): string {
  const cseq = parseCSeq(getHeader(req, 'cseq') ?? '');
  const from = tagOf(getHeader(req, 'from')) ?? '';
  return [
    '2543',
    req.uri,
    toTag,
    from,
    getHeader(req, 'call-id') ?? '',
    cseq.seq,
    method,
    `${via.transport} ${via.host}:${via.port ?? ''}`,
  ].join('\n');
}

function tagOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const m = /;\s*tag=([^;>\s]+)/i.exec(value);
  return m?.[1];
}
