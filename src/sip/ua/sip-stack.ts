// The embedded SIP user agent: transports, transactions and call legs wired
// together, plus the out-of-dialog UAS behaviour (RFC 3261 §8.2).

import { checkIncomingRequest, generateTag, getHeader, parseCSeq } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import { tagOf, type DialogSnapshot } from '../dialog/dialog.js';
import { isIP } from 'node:net';
import { createResponse } from '../transaction/create-response.js';
import { isStateless } from '../transaction/stateless-responder.js';
import { timerValues } from '../transaction/timers.js';
import {
  BUDGET_RETRY_AFTER_SECONDS,
  TransactionLayer,
  type Admission,
} from '../transaction/transaction-layer.js';
import type { ServerTransaction } from '../transaction/transaction-types.js';
import { systemClock, type Clock } from '../transport/clock.js';
import { silentLogger, type SipLogger } from '../transport/logger.js';
import { resolveTarget, type DnsResolver, type TargetHost } from '../transport/resolver.js';
import {
  EDGE_DEFAULTS,
  normaliseIp,
  SourcePolicy,
  type DropReason,
} from '../transport/source-policy.js';
import { createSipStats, type SipStats } from '../transport/stats.js';
import type { TlsProfileMaterial } from '../transport/tls-profiles.js';
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
import { Registrations } from './registrations.js';
import { TrunkMonitor, type TrunkMonitorOptions } from './trunk-monitor.js';

export interface SipStackDeps {
  clock?: Clock;
  logger?: SipLogger;
  dnsResolver?: DnsResolver;
}

export interface SipStack {
  start(): Promise<void>;
  /** Un-REGISTERs (at most 4 s), stops timers and closes sockets; live legs
   *  are dropped without BYE. */
  stop(): Promise<void>;
  localAddress(transport: TransportProtocol): { host: string; port: number };
  invite(opts: InviteOptions): CallLeg;
  /** BYE for a dialog no leg of this process holds (one a crash left behind);
   *  resolves with the final status (408 no answer, 503 transport error). */
  endDialog(dialog: DialogSnapshot, reason?: HangupReason): Promise<number>;
  startTrunkMonitor(opts: TrunkMonitorOptions): TrunkMonitor;
  /** Registration trunks' bindings (RFC 3261 §10); stop() removes them. */
  readonly registrations: Registrations;
  stats(): SipStats & {
    activeLegs: number;
    clientTransactions: number;
    serverTransactions: number;
  };
  /** The transport receive path, for fuzzing and tests. */
  receive(buf: Buffer, source: Endpoint): void;
  /**
   * The trunks whose addresses are trusted for out-of-dialog requests (with
   * `edge.allowedSources`). Names are resolved as for dialing (RFC 3263) and
   * again every minute; the same list again costs nothing, so the daemon
   * simply calls this whenever it looks at its trunks.
   */
  setTrunkTargets(targets: readonly TargetHost[]): Promise<void>;
  /** What the edge dropped and why, its budgets, and the UDP socket. */
  edge(): SipEdgeStats;
}

export interface SipEdgeStats {
  /** Messages given no processing, by reason (malformed = parse errors). */
  dropped: Record<DropReason, number>;
  /** Times a stranger IP emptied its token bucket and was silenced. */
  silencings: number;
  /** Trunk addresses trusted now (the allow-list is on top). */
  trustedAddresses: number;
  budget: { serverTransactions: number; clientTransactions: number };
  /** Absent without UDP; kernelDrops undefined where /proc/net/udp is not there. */
  udp?: { recvBufferBytes: number; sendBufferBytes: number; kernelDrops: number | undefined };
}

/** How often trunk names are resolved again for the trusted set. */
const TRUNK_RESOLVE_INTERVAL_MS = 60_000;

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
  private registrationClient: Registrations | undefined;
  private readonly ctx: LegContext;
  private readonly clock: Clock;
  private readonly logger: SipLogger;
  private readonly sentByCache = new Map<TransportProtocol, string>();
  private readonly contactCache = new Map<TransportProtocol, string>();
  private readonly policy: SourcePolicy;
  private trunkKey: string | undefined;
  private trunkResolvedAt = 0;
  private trunkGeneration = 0;

  constructor(
    private readonly config: ResolvedSipConfig,
    private readonly deps: SipStackDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.logger = deps.logger ?? silentLogger;
    const edge = config.edge;
    this.policy = new SourcePolicy(this.clock, {
      allowedSources: edge.allowedSources,
      strangers: edge.strangers,
      rateLimit: edge.rateLimit,
    });
    this.transport = new TransportLayer({
      udp: config.udp,
      tcp: config.tcp,
      tls: config.tls,
      advertisedHost: config.advertisedHost,
      tcpIdleTimeoutMs: config.tcpIdleTimeoutMs,
      tcpLimits: config.tcpLimits,
      userAgent: config.userAgent,
      udpRecvBufferSize: edge.udpRecvBufferBytes ?? EDGE_DEFAULTS.udpRecvBufferBytes,
      udpSendBufferSize: edge.udpSendBufferBytes ?? EDGE_DEFAULTS.udpSendBufferBytes,
      answerUnparsable: (source) => this.policy.answerMalformed(source.host),
      clock: this.clock,
      stats: this.counters,
      logger: this.logger,
    });
    this.tx = new TransactionLayer(this.transport, {
      clock: this.clock,
      timers: timerValues(config.timers),
      stats: this.counters,
      maxServerTransactions: edge.maxServerTransactions ?? EDGE_DEFAULTS.maxServerTransactions,
      maxClientTransactions: edge.maxClientTransactions ?? EDGE_DEFAULTS.maxClientTransactions,
    });
    this.transport.onMessage(this.tx.handleMessage);
    // A registration's flow that closes is registered again (RFC 5626 §4.4.1).
    this.transport.onFlowClosed((peer) => this.registrationClient?.flowClosed(peer));
    this.tx.onAdmission((req, source, full) => this.admit(req, source, full));
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
    const udp = this.transport.udpSocket();
    this.logger.info(
      {
        udp: this.transport.has('udp') ? this.transport.localAddress('udp') : undefined,
        tcp: this.transport.has('tcp') ? this.transport.localAddress('tcp') : undefined,
        tls: this.config.tls?.server ? this.transport.localAddress('tls') : undefined,
        udpRecvBufferBytes: udp?.recvBufferBytes,
        udpSendBufferBytes: udp?.sendBufferBytes,
        strangers: this.policy.strangers,
      },
      'sip stack listening',
    );
    // Linux reports twice what it granted (socket(7)); less than asked means net.core.rmem_max capped it.
    const asked = this.config.edge.udpRecvBufferBytes ?? EDGE_DEFAULTS.udpRecvBufferBytes;
    const granted =
      udp && (process.platform === 'linux' ? udp.recvBufferBytes / 2 : udp.recvBufferBytes);
    if (granted !== undefined && granted < asked)
      this.logger.warn(
        { asked, granted },
        'UDP receive buffer smaller than asked: raise net.core.rmem_max',
      );
  }

  async stop(): Promise<void> {
    // RFC 3261 §10.2.2: our bindings go before the transport does.
    await this.registrationClient?.stop();
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
    if (opts.target.tls) this.ensureTlsProfile(opts.target.tls);
    const leg = new CallLeg(this.ctx, opts);
    void leg.start();
    return leg;
  }

  /** A trunk's TLS material, registered before a connection may need it. */
  private ensureTlsProfile(tls: { profile: string } & TlsProfileMaterial): void {
    try {
      this.transport.tlsProfiles.set(tls.profile, tls);
    } catch {
      // Material the API let through but OpenSSL refuses: the system's CAs apply,
      // so the handshake fails in the open instead of the leg throwing here.
      this.transport.tlsProfiles.delete(tls.profile);
    }
  }

  endDialog(dialog: DialogSnapshot, reason?: HangupReason): Promise<number> {
    return endOrphanDialog(this.ctx, dialog, reason);
  }

  /** The trunks' registrations (RFC 3261 §10); un-REGISTERed by stop(). */
  get registrations(): Registrations {
    if (!this.registrationClient) {
      this.registrationClient = new Registrations({
        tx: this.tx,
        clock: this.clock,
        resolve: (target) => {
          if (target.tls) this.ensureTlsProfile(target.tls);
          return resolveTarget(target, this.deps.dnsResolver);
        },
        sentBy: (t) => this.sentBy(t),
        createAuthorizer: (creds) => createDigestAuthorizer(creds),
        userAgent: this.config.userAgent,
        authAttemptLimit: this.config.authAttemptLimit,
        retryMinMs: this.config.registerRetryMinMs,
        retryMaxMs: this.config.registerRetryMaxMs,
      });
    }
    return this.registrationClient;
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

  async setTrunkTargets(targets: readonly TargetHost[]): Promise<void> {
    const key = targets
      .map((t) => `${t.transport} ${t.host} ${t.port ?? ''}`)
      .sort()
      .join('\n');
    const now = this.clock.now();
    const names = targets.some((t) => isIP(normaliseIp(t.host)) === 0);
    const fresh = !names || now - this.trunkResolvedAt < TRUNK_RESOLVE_INTERVAL_MS;
    if (key === this.trunkKey && fresh) return;
    this.trunkKey = key;
    this.trunkResolvedAt = now;
    const generation = ++this.trunkGeneration;
    const lists = await Promise.all(
      targets.map((t) => resolveTarget(t, this.deps.dnsResolver).catch(() => [])),
    );
    if (generation !== this.trunkGeneration) return; // a newer list won
    this.policy.setTrunkAddresses(lists.flat().map((e) => e.host));
  }

  edge(): SipEdgeStats {
    const budget = this.tx.budget;
    const udp = this.transport.udpSocket();
    return {
      dropped: { ...this.policy.dropped, malformed: this.counters.parseErrorsDropped },
      silencings: this.policy.silencings,
      trustedAddresses: this.policy.trusted().trunkAddresses,
      budget,
      ...(udp ? { udp } : {}),
    };
  }

  /**
   * The edge (issue 23), for a request that matched no transaction: live
   * calls first (in-dialog requests, CANCEL of an INVITE we hold), then the
   * stranger's rate limit, OPTIONS answered statelessly to anyone, strangers
   * refused once or dropped, and the budget: a stateless 503 to a known
   * source, nothing to an unknown one.
   */
  private admit(req: SipRequest, source: Endpoint, budgetReached: boolean): Admission {
    const toTag = tagOf(getHeader(req, 'to'));
    if (toTag !== undefined && this.legs.has(`${getHeader(req, 'call-id') ?? ''}\n${toTag}`))
      return 'priority';
    if (req.method === 'CANCEL' && this.tx.findInviteServer(req)) return 'priority';
    const policy = this.policy;
    const known = policy.isKnown(source.host);
    if (!known && !policy.charge(source.host)) {
      policy.count('rate_limited');
      return 'handled';
    }
    if (req.method === 'OPTIONS' && toTag === undefined) {
      this.onRequest(req, this.tx.stateless(req, source));
      return 'handled';
    }
    if (!known && policy.strangers !== 'serve') {
      policy.count('stranger');
      if (policy.strangers === 'reject') {
        const stx = this.tx.stateless(req, source);
        stx.respond(this.response(req, 403, 'Forbidden', [], stx.toTag));
      }
      return 'handled';
    }
    if (budgetReached) {
      policy.count('budget');
      if (known) {
        const stx = this.tx.stateless(req, source);
        const retryAfter: [string, string] = ['retry-after', String(BUDGET_RETRY_AFTER_SECONDS)];
        stx.respond(this.response(req, 503, 'Service Unavailable', [retryAfter], stx.toTag));
      }
      return 'handled';
    }
    return 'transaction';
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
      c = `<sip:gw@${this.sentBy(t)}${t === 'udp' ? '' : `;transport=${t}`}>`;
      this.contactCache.set(t, c);
    }
    return c;
  }

  private onRequest(req: SipRequest, stx: ServerTransaction | undefined): void {
    // §8.2.7: a stateless answer carries the To tag the request determines.
    const tag = stx && isStateless(stx) ? stx.toTag : undefined;
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
            tag,
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
      stx.respond(this.response(req, 481, 'Call/Transaction Does Not Exist', [], tag));
      return;
    }
    switch (req.method) {
      case 'OPTIONS':
        stx.respond(
          this.response(
            req,
            200,
            'OK',
            [
              ['allow', ALLOW],
              ['accept', ACCEPT],
            ],
            tag,
          ),
        );
        return;
      case 'INVITE': {
        // Inbound calls are not supported: refuse cleanly (RFC 3261 §20.43 Warning).
        const status = this.config.inboundInviteStatus;
        const reason = status === 403 ? 'Forbidden' : 'Temporarily Unavailable';
        const warning = `399 ${this.sentBy(this.anyTransport())} "Inbound calls are not accepted"`;
        stx.respond(this.response(req, status, reason, [['warning', warning]], tag));
        return;
      }
      case 'BYE':
      case 'INFO':
      case 'NOTIFY':
      case 'UPDATE':
      case 'REFER':
        stx.respond(this.response(req, 481, 'Call/Transaction Does Not Exist', [], tag));
        return;
      default:
        stx.respond(this.response(req, 405, 'Method Not Allowed', [['allow', ALLOW]], tag));
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
    toTag?: string,
  ): SipResponse {
    return createResponse(req, status, reason, {
      // retransmissions get the stored response (same tag), or a stateless one made alike
      toTag: toTag ?? generateTag(),
      headers: [['server', this.config.userAgent], ...headers],
    });
  }

  private anyTransport(): TransportProtocol {
    return this.transport.has('udp') ? 'udp' : 'tcp';
  }
}
