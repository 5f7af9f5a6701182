// The embedded SIP user agent: transports, transactions and call legs wired
// together, plus the out-of-dialog UAS behaviour (RFC 3261 §8.2).

import { checkIncomingRequest, generateTag, getHeader, parseCSeq } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import { tagOf, type DialogSnapshot } from '../dialog/dialog.js';
import { createResponse } from '../transaction/create-response.js';
import { timerValues } from '../transaction/timers.js';
import { TransactionLayer } from '../transaction/transaction-layer.js';
import type { ServerTransaction } from '../transaction/transaction-types.js';
import { systemClock, type Clock } from '../transport/clock.js';
import { silentLogger, type SipLogger } from '../transport/logger.js';
import { resolveTarget, type DnsResolver } from '../transport/resolver.js';
import { createSipStats, type SipStats } from '../transport/stats.js';
import { TransportLayer } from '../transport/transport-layer.js';
import type { Endpoint, TransportProtocol } from '../transport/types.js';
import { createDigestAuthorizer } from './authorizer.js';
import { CallLeg } from './call-leg.js';
import type { HangupReason, InviteOptions } from './call-leg-types.js';
import { endOrphanDialog } from './orphan-dialog.js';
import { resolveSipConfig, type ResolvedSipConfig, type SipStackConfig } from './config.js';
import { handleInDialogRequest } from './in-dialog-server.js';
import type { LegContext } from './leg-context.js';
import { ALLOW } from './request-factory.js';
import { TrunkMonitor, type TrunkMonitorOptions } from './trunk-monitor.js';

export interface SipStackDeps {
  clock?: Clock;
  logger?: SipLogger;
  dnsResolver?: DnsResolver;
}

export interface SipStack {
  start(): Promise<void>;
  /** Stops timers and closes sockets; live legs are dropped without BYE. */
  stop(): Promise<void>;
  localAddress(transport: TransportProtocol): { host: string; port: number };
  invite(opts: InviteOptions): CallLeg;
  /** BYE for a dialog no leg of this process holds (one a crash left behind);
   *  resolves with the final status (408 no answer, 503 transport error). */
  endDialog(dialog: DialogSnapshot, reason?: HangupReason): Promise<number>;
  startTrunkMonitor(opts: TrunkMonitorOptions): TrunkMonitor;
  stats(): SipStats & {
    activeLegs: number;
    clientTransactions: number;
    serverTransactions: number;
  };
  /** The transport receive path, for fuzzing and tests. */
  receive(buf: Buffer, source: Endpoint): void;
}

const ACCEPT = 'application/sdp, application/dtmf-relay, application/dtmf, message/sipfrag';
const ACCEPT_TYPES = ACCEPT.split(', ');

export function createSipStack(config: SipStackConfig, deps: SipStackDeps = {}): SipStack {
  return new EmbeddedSipStack(resolveSipConfig(config), deps);
}

class EmbeddedSipStack implements SipStack {
  private readonly counters = createSipStats();
  private readonly transport: TransportLayer;
  private readonly tx: TransactionLayer;
  private readonly legs = new Map<string, CallLeg>();
  private readonly monitors = new Set<TrunkMonitor>();
  private readonly ctx: LegContext;
  private readonly clock: Clock;
  private readonly logger: SipLogger;
  private readonly sentByCache = new Map<TransportProtocol, string>();
  private readonly contactCache = new Map<TransportProtocol, string>();

  constructor(
    private readonly config: ResolvedSipConfig,
    private readonly deps: SipStackDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? silentLogger;
    this.transport = new TransportLayer({
      udp: config.udp,
      tcp: config.tcp,
      advertisedHost: config.advertisedHost,
      tcpIdleTimeoutMs: config.tcpIdleTimeoutMs,
      tcpLimits: config.tcpLimits,
      userAgent: config.userAgent,
      clock: this.clock,
      stats: this.counters,
      logger: this.logger,
    });
    this.tx = new TransactionLayer(this.transport, {
      clock: this.clock,
      timers: timerValues(config.timers),
      stats: this.counters,
    });
    this.transport.onMessage(this.tx.handleMessage);
    this.tx.onRequest((req, _source, stx) => this.onRequest(req, stx));
    this.tx.onStrayResponse((res) => this.onStrayResponse(res));
    this.ctx = {
      tx: this.tx,
      clock: this.clock,
      stats: this.counters,
      config,
      logger: this.logger,
      sentBy: (t) => this.sentBy(t),
      contact: (t) => this.contact(t),
      resolve: (target) => resolveTarget(target, deps.dnsResolver),
      createAuthorizer: (creds) => createDigestAuthorizer(creds),
      register: (key, leg) => this.legs.set(key, leg as CallLeg),
      unregister: (key, leg) => {
        if (this.legs.get(key) === leg) this.legs.delete(key);
      },
    };
  }

  async start(): Promise<void> {
    await this.transport.start();
    this.logger.info(
      {
        udp: this.transport.has('udp') ? this.transport.localAddress('udp') : undefined,
        tcp: this.transport.has('tcp') ? this.transport.localAddress('tcp') : undefined,
      },
      'sip stack listening',
    );
  }

  async stop(): Promise<void> {
    for (const m of this.monitors) m.stop();
    this.monitors.clear();
    this.tx.stop();
    for (const leg of this.legs.values()) leg.sessionTimer.stop();
    this.legs.clear();
    await this.transport.stop();
  }

  localAddress(transport: TransportProtocol): { host: string; port: number } {
    return this.transport.localAddress(transport);
  }

  invite(opts: InviteOptions): CallLeg {
    const leg = new CallLeg(this.ctx, opts);
    void leg.start();
    return leg;
  }

  endDialog(dialog: DialogSnapshot, reason?: HangupReason): Promise<number> {
    return endOrphanDialog(this.ctx, dialog, reason);
  }

  startTrunkMonitor(opts: TrunkMonitorOptions): TrunkMonitor {
    const m = new TrunkMonitor(opts, {
      tx: this.tx,
      clock: this.clock,
      resolve: (target) => resolveTarget(target, this.deps.dnsResolver),
      sentBy: (t) => this.sentBy(t),
      userAgent: this.config.userAgent,
      timerFMs: timerValues(this.config.timers).TIMER_F,
      onStop: (self) => this.monitors.delete(self),
    });
    this.monitors.add(m);
    m.start();
    return m;
  }

  stats(): SipStats & {
    activeLegs: number;
    clientTransactions: number;
    serverTransactions: number;
  } {
    const size = this.tx.size();
    return {
      ...this.counters,
      activeLegs: this.legs.size,
      clientTransactions: size.clients,
      serverTransactions: size.servers,
    };
  }

  receive(buf: Buffer, source: Endpoint): void {
    this.transport.receive(buf, source);
  }

  private sentBy(t: TransportProtocol): string {
    let s = this.sentByCache.get(t);
    if (s === undefined) {
      const a = this.transport.sentBy(t);
      s = a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
      this.sentByCache.set(t, s);
    }
    return s;
  }

  private contact(t: TransportProtocol): string {
    let c = this.contactCache.get(t);
    if (c === undefined) {
      c = `<sip:gw@${this.sentBy(t)}${t === 'tcp' ? ';transport=tcp' : ''}>`;
      this.contactCache.set(t, c);
    }
    return c;
  }

  private onRequest(req: SipRequest, stx: ServerTransaction | undefined): void {
    // RFC 3261 §8.2: the UAS checks before acting (never answer an ACK).
    const rejection = checkIncomingRequest(req, {
      supported: ['timer'],
      acceptTypes: ACCEPT_TYPES,
    });
    if (rejection) {
      if (stx)
        stx.respond(
          this.response(
            req,
            rejection.status,
            rejection.reason,
            (rejection.headers ?? []).map((h) => [h.name, h.value]),
          ),
        );
      return;
    }
    const toTag = tagOf(getHeader(req, 'to'));
    if (toTag !== undefined) {
      const leg = this.legs.get(`${getHeader(req, 'call-id') ?? ''}\n${toTag}`);
      if (leg) {
        handleInDialogRequest(leg, req, stx);
        return;
      }
    }
    if (!stx) return; // an ACK for nothing we know: drop (§17.2.3)
    if (req.method === 'CANCEL') {
      this.onCancel(req, stx);
      return;
    }
    if (toTag !== undefined) {
      // §12.2.2: a request for a dialog we don't have.
      stx.respond(this.response(req, 481, 'Call/Transaction Does Not Exist'));
      return;
    }
    switch (req.method) {
      case 'OPTIONS':
        stx.respond(
          this.response(req, 200, 'OK', [
            ['allow', ALLOW],
            ['accept', ACCEPT],
          ]),
        );
        return;
      case 'INVITE': {
        // Inbound calls are not supported: refuse cleanly (RFC 3261 §20.43 Warning).
        const status = this.config.inboundInviteStatus;
        const reason = status === 403 ? 'Forbidden' : 'Temporarily Unavailable';
        const warning = `399 ${this.sentBy(this.anyTransport())} "Inbound calls are not accepted"`;
        stx.respond(this.response(req, status, reason, [['warning', warning]]));
        return;
      }
      case 'BYE':
      case 'INFO':
      case 'NOTIFY':
      case 'UPDATE':
      case 'REFER':
        stx.respond(this.response(req, 481, 'Call/Transaction Does Not Exist'));
        return;
      default:
        stx.respond(this.response(req, 405, 'Method Not Allowed', [['allow', ALLOW]]));
    }
  }

  /** RFC 3261 §9.2: 200 to the CANCEL, 487 to the INVITE it cancels. */
  private onCancel(req: SipRequest, stx: ServerTransaction): void {
    const inviteTx = this.tx.findInviteServer(req);
    if (!inviteTx) {
      stx.respond(this.response(req, 481, 'Call/Transaction Does Not Exist'));
      return;
    }
    stx.respond(this.response(req, 200, 'OK'));
    if (inviteTx.state === 'proceeding')
      inviteTx.respond(this.response(inviteTx.request, 487, 'Request Terminated'));
  }

  /** A 2xx whose INVITE transaction is gone: the leg ACKs it again (§13.2.2.4). */
  private onStrayResponse(res: SipResponse): void {
    if (res.status < 200 || res.status >= 300) return;
    let method: string;
    try {
      method = parseCSeq(getHeader(res, 'cseq') ?? '').method;
    } catch {
      return;
    }
    if (method !== 'INVITE') return;
    const fromTag = tagOf(getHeader(res, 'from'));
    const leg = this.legs.get(`${getHeader(res, 'call-id') ?? ''}\n${fromTag ?? ''}`);
    leg?.onStray2xx(res);
  }

  private response(
    req: SipRequest,
    status: number,
    reason: string,
    headers: Array<[string, string]> = [],
  ): SipResponse {
    return createResponse(req, status, reason, {
      toTag: generateTag(), // retransmissions get the stored response, same tag
      headers: [['server', this.config.userAgent], ...headers],
    });
  }

  private anyTransport(): TransportProtocol {
    return this.transport.has('udp') ? 'udp' : 'tcp';
  }
}
