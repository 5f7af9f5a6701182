// The transport layer (RFC 3261 §18): owns the UDP socket and the TCP and
// TLS listeners, turns bytes into messages with per-message error isolation, stamps
// `received`/`rport` on requests (§18.2.1, RFC 3581 §4) and chooses where
// responses go (§18.2.2).

import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import {
  findMessageLength,
  formatVia,
  getHeaders,
  parseMessage,
  parseVia,
  serializeMessage,
} from '../message/index.js';
import { SipParseError, type SipMessage, type SipRequest, type Via } from '../message/types.js';
import { buildBadRequestReply } from './bad-request-reply.js';
import type { Clock } from './clock.js';
import { silentLogger, type SipLogger } from './logger.js';
import type { SipStats } from './stats.js';
import { TcpTransport, type StreamTlsOptions, type TcpLimits } from './tcp-transport.js';
import { TlsProfiles } from './tls-profiles.js';
import {
  SipStackError,
  type Endpoint,
  type SendErrorHandler,
  type SipTransport,
  type TransportProtocol,
} from './types.js';
import { readUdpKernelDrops } from './udp-kernel-drops.js';
import { UdpTransport, type UdpBufferSizes } from './udp-transport.js';

export interface ListenConfig {
  host: string;
  /** 0 lets the OS choose. */
  port: number;
}

/** The TLS transport: where it listens (when it has a certificate of
 *  ours) and its keep-alive; the trunks' profiles are added at run time. */
export type TlsListenConfig = ListenConfig & Omit<StreamTlsOptions, 'contextFor'>;

export interface TransportLayerOptions {
  udp?: ListenConfig;
  tcp?: ListenConfig;
  tls?: TlsListenConfig;
  /** Host written into Via and Contact; default: the listen host, or the
   *  first non-internal IPv4 address when listening on a wildcard. */
  advertisedHost?: string;
  tcpIdleTimeoutMs?: number;
  /** Message deadline and connection caps; defaults DEFAULT_TCP_LIMITS. */
  tcpLimits?: Partial<TcpLimits>;
  userAgent?: string;
  /** SO_RCVBUF / SO_SNDBUF asked for on the UDP socket, bytes; default the OS's. */
  udpRecvBufferSize?: number;
  udpSendBufferSize?: number;
  /** Whether a request that did not parse gets its 400/505 back; default yes. */
  answerUnparsable?: (source: Endpoint) => boolean;
  clock: Clock;
  stats: SipStats;
  logger?: SipLogger;
}

/** A parsed message and where it came from. */
export type MessageHandler = (msg: SipMessage, source: Endpoint) => void;

export class TransportLayer {
  private readonly transports = new Map<TransportProtocol, SipTransport>();
  private handler: MessageHandler = () => undefined;
  private readonly stats: SipStats;
  private readonly logger: SipLogger;
  private handlerErrorLogged = false;
  /** Trunks' CA bundles and client certificates (TLS). */
  readonly tlsProfiles = new TlsProfiles();

  constructor(private readonly opts: TransportLayerOptions) {
    this.stats = opts.stats;
    this.logger = opts.logger ?? silentLogger;
    const onData = (buf: Buffer, source: Endpoint): void => this.receive(buf, source);
    if (opts.udp) {
      this.transports.set(
        'udp',
        new UdpTransport({
          ...opts.udp,
          recvBufferSize: opts.udpRecvBufferSize,
          sendBufferSize: opts.udpSendBufferSize,
          onData,
          onSocketError: (err) => this.logger.warn({ err }, 'udp socket error'),
        }),
      );
    }
    const stream = (listen: ListenConfig, secure: StreamTlsOptions | undefined): TcpTransport =>
      new TcpTransport({
        host: listen.host,
        port: listen.port,
        tls: secure,
        onData,
        framer: findMessageLength,
        clock: opts.clock,
        idleTimeoutMs: opts.tcpIdleTimeoutMs,
        ...opts.tcpLimits,
        counters: this.stats,
        onFramingError: () => this.stats.parseErrorsDropped++,
        onFlowClosed: (host, port) => {
          for (const h of this.flowClosedHandlers)
            h({ transport: secure ? 'tls' : 'tcp', host, port });
        },
        onConnectionChange: (opened) => {
          if (opened) this.stats.tcpConnectionsOpened++;
          else this.stats.tcpConnectionsClosed++;
        },
      });
    if (opts.tcp) this.transports.set('tcp', stream(opts.tcp, undefined));
    if (opts.tls) {
      const { server, keepAliveIntervalMs, keepAliveTimeoutMs } = opts.tls;
      this.transports.set(
        'tls',
        stream(opts.tls, {
          server,
          keepAliveIntervalMs,
          keepAliveTimeoutMs,
          contextFor: (profile) => this.tlsProfiles.contextFor(profile),
        }),
      );
    }
  }

  private readonly flowClosedHandlers: Array<(peer: Endpoint) => void> = [];

  /** Calls `handler` when a TCP or TLS connection we opened closes. */
  onFlowClosed(handler: (peer: Endpoint) => void): void {
    this.flowClosedHandlers.push(handler);
  }

  /** Registers the layer above (the transaction layer). */
  onMessage(handler: MessageHandler): void {
    this.handler = handler;
  }

  async start(): Promise<void> {
    for (const t of this.transports.values()) await t.listen();
  }

  async stop(): Promise<void> {
    for (const t of this.transports.values()) await t.close();
  }

  has(protocol: TransportProtocol): boolean {
    return this.transports.has(protocol);
  }

  /** The bound address of one transport. */
  localAddress(protocol: TransportProtocol): { host: string; port: number } {
    const t = this.transports.get(protocol);
    if (!t) throw new SipStackError('transport_not_configured', 'transport not configured');
    return t.address();
  }

  /** The host:port we put in Via sent-by and Contact for a transport. */
  sentBy(protocol: TransportProtocol): { host: string; port: number } {
    const bound = this.localAddress(protocol);
    return { host: this.advertisedHost(bound.host), port: bound.port };
  }

  /** The UDP socket's buffer sizes as granted and the kernel's drop counter
   *  for it (undefined where /proc/net/udp is not there); undefined without UDP. */
  udpSocket(): (UdpBufferSizes & { kernelDrops: number | undefined }) | undefined {
    const t = this.transports.get('udp');
    if (!(t instanceof UdpTransport)) return undefined;
    const sizes = t.bufferSizes();
    if (!sizes) return undefined;
    const a = t.address();
    return { ...sizes, kernelDrops: readUdpKernelDrops(a.host, a.port) };
  }

  send(msg: SipMessage, dest: Endpoint, onError?: SendErrorHandler): Buffer {
    const buf = serializeMessage(msg);
    this.sendBuffer(buf, dest, onError);
    return buf;
  }

  sendBuffer(buf: Buffer, dest: Endpoint, onError?: SendErrorHandler): void {
    const t = this.transports.get(dest.transport);
    this.stats.messagesOut++;
    this.stats.bytesOut += buf.length;
    const fail = (err: Error): void => {
      this.stats.sendErrors++;
      onError?.(err);
    };
    if (!t) {
      fail(new SipStackError('transport_not_configured', 'transport not configured'));
      return;
    }
    t.send(buf, dest.host, dest.port, fail, dest.tls);
  }

  /** The receive path for one datagram or stream frame. Never throws. */
  receive(buf: Buffer, source: Endpoint): void {
    this.stats.messagesIn++;
    this.stats.bytesIn += buf.length;
    let msg: SipMessage;
    try {
      msg = parseMessage(buf);
      if (msg.kind === 'request') stampTopVia(msg, source);
    } catch (err) {
      this.stats.parseErrorsDropped++;
      if (
        err instanceof SipParseError &&
        err.status &&
        (this.opts.answerUnparsable?.(source) ?? true)
      )
        this.answerUnparsable(buf, err.status, source);
      return;
    }
    try {
      this.handler(msg, source);
    } catch (err) {
      // A header the layers above could not read: the message is dropped.
      if (err instanceof SipParseError) {
        this.stats.parseErrorsDropped++;
        return;
      }
      // A bug above must not kill the socket loop: count, log once, go on.
      this.stats.handlerErrors++;
      if (process.env.SIP_DEBUG_HANDLER_ERRORS) console.error(err);
      if (!this.handlerErrorLogged) {
        this.handlerErrorLogged = true;
        this.logger.error({ err }, 'sip message handler threw');
      }
    }
  }

  private answerUnparsable(buf: Buffer, status: 400 | 505, source: Endpoint): void {
    let reply: Buffer | undefined;
    try {
      reply = buildBadRequestReply(buf, status, this.opts.userAgent);
    } catch {
      reply = undefined;
    }
    if (!reply) return;
    this.stats.badRequestsAnswered++;
    this.sendBuffer(reply, source);
  }

  private advertisedHost(bound: string): string {
    if (this.opts.advertisedHost) return this.opts.advertisedHost;
    if (bound !== '0.0.0.0' && bound !== '::') return bound;
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
    }
    return '127.0.0.1';
  }
}

/** RFC 3261 §18.2.1 `received` and RFC 3581 §4 `rport` on the top Via of a
 *  received request. Throws (→ counted as a parse error) without a Via. */
function stampTopVia(req: SipRequest, source: Endpoint): void {
  const headers = req.headers;
  let idx = -1;
  for (let i = 0; i < headers.length; i++) {
    if (headers[i]!.name === 'via') {
      idx = i;
      break;
    }
  }
  if (idx < 0) throw new SipParseError('request without Via', 400);
  const header = headers[idx]!;
  const top = getHeaders(req, 'via')[0] ?? header.value;
  const via = parseVia(top)[0];
  if (!via) throw new SipParseError('bad Via', 400);
  const needReceived = via.host !== source.host;
  const needRport = via.rport === null;
  if (!needReceived && !needRport) return;
  via.received = source.host; // RFC 3581 §4: received is added whenever rport is filled.
  if (needRport) via.rport = source.port;
  const rest = header.value.startsWith(top) ? header.value.slice(top.length) : '';
  header.value = formatVia(via) + rest;
}

/** RFC 3261 §18.2.2 (and RFC 3581 §4): where the responses to a request go. */
export function responseDestination(req: SipRequest, source: Endpoint): Endpoint {
  if (source.transport !== 'udp') return source; // same connection while it lives
  const top = getHeaders(req, 'via')[0];
  if (!top) return source;
  let via: Via;
  try {
    const parsed = parseVia(top)[0];
    if (!parsed) return source;
    via = parsed;
  } catch {
    return source;
  }
  if (typeof via.rport === 'number')
    return { transport: 'udp', host: source.host, port: via.rport };
  const host = via.received ?? via.host;
  if (!isIP(host)) return source;
  return { transport: 'udp', host, port: via.port ?? 5060 };
}
