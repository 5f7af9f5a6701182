// TCP and TLS transport: a listener plus a pool of connections keyed by remote
// address, reused in both directions (RFC 3261 §18.2.2, §18.3), framed by
// Content-Length. TLS (RFC 3261 §26.2.1) is the same stream over node:tls;
// connections we open verify the peer's certificate and, when idle, send the
// RFC 5626 §4.4.1 CRLF keep-alive and are dropped when no pong comes.
//
// Every connection is bounded: a message must complete within a deadline from
// its first byte, however slowly it trickles; a connection with no complete
// message, keep-alive ping or send for the idle timeout is closed fully (FIN,
// then destroyed after a short grace so no half-closed socket keeps its
// descriptor); accepted connections are capped in total and per source
// address; unframed bytes are capped per connection. A double CRLF between
// messages is an RFC 5626 §4.4.1 keep-alive ping answered with one CRLF; a
// lone CRLF there is ignored (RFC 3261 §7.5) and keeps nothing alive.

import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Clock, TimerHandle } from './clock.js';
import type { SipStats } from './stats.js';
import { isTlsFailure } from './tls-errors.js';
import { connectTls, createTlsListener, tlsKey, type StreamTlsOptions } from './tls-stream.js';
import type { RawReceiver, SendErrorHandler, SipTransport, TlsPeer } from './types.js';

/** Returns the length of the message starting at `offset`, -1 when more bytes
 *  are needed; throws when the stream cannot be framed. */
export type { StreamTlsOptions } from './tls-stream.js';

export type StreamFramer = (buf: Buffer, offset: number) => number;

/** Bounds on connections; every field has a default (DEFAULT_TCP_LIMITS). */
export interface TcpLimits {
  /** A message must be complete this long after its first byte, or the
   *  connection is destroyed. */
  messageDeadlineMs: number;
  /** Accepted connections open at once; over it a new one is destroyed. */
  maxConnections: number;
  /** Accepted connections open at once from one source address. */
  maxConnectionsPerSource: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  messageDeadlineMs: 10_000,
  maxConnections: 1000,
  maxConnectionsPerSource: 20,
};

/** The counters this transport keeps (fields of the stack's SipStats). */
export type TcpCounters = Pick<
  SipStats,
  | 'tcpClosedDeadline'
  | 'tcpClosedIdle'
  | 'tcpClosedCap'
  | 'tcpKeepAlivePongs'
  | 'tlsHandshakeFailures'
  | 'keepAlivePingsSent'
  | 'keepAliveTimeouts'
>;

export interface TcpTransportOptions extends Partial<TcpLimits> {
  /** Present: a TLS transport. */
  tls?: StreamTlsOptions;
  host: string;
  port: number;
  onData: RawReceiver;
  framer: StreamFramer;
  clock: Clock;
  /** Close a connection without traffic for this long. Default 60 000 ms. */
  idleTimeoutMs?: number;
  /** After the FIN of an idle close, destroy the socket this much later
   *  whether or not the peer closed its side. Default 1 000 ms. */
  closeGraceMs?: number;
  /** Bytes a connection may hold without a complete message. Default 65 535. */
  maxPendingBytes?: number;
  counters?: TcpCounters;
  /** A stream whose framing broke (bytes we can't delimit). */
  onFramingError?: () => void;
  onConnectionChange?: (opened: boolean) => void;
  /** A connection we opened closed (the flow to that peer is gone). */
  onFlowClosed?: (host: string, port: number) => void;
}

/** A connection; `waiting` collects send-error handlers until the peer has
 *  said something on it: a refusal can come after the connect (a TLS 1.3
 *  server checks our certificate after its handshake completed on our side). */
interface Connection {
  key: string;
  socket: Socket;
  host: string;
  port: number;
  /** Accepted from a peer (counted against the caps), not dialled by us. */
  inbound: boolean;
  buffered: Buffer | undefined;
  /** Line feeds seen between messages since the last message or ping (0-1),
   *  and when the first of them came. */
  boundaryLineFeeds: number;
  boundaryStart: number;
  lastActivity: number;
  connecting: boolean;
  /** The peer sent a byte on this connection. */
  heard: boolean;
  waiting: SendErrorHandler[];
  /** Runs while a message is incomplete; fires at its deadline. */
  deadline: TimerHandle | undefined;
  /** Set once we decided to close: the socket is no longer used for sends. */
  closing: TimerHandle | true | undefined;
  /** When our keep-alive ping left, while its pong is awaited. */
  pingSentAt: number | undefined;
}

const PONG = Buffer.from('\r\n');
/** Send-error handlers kept per connection until the peer speaks. */
const MAX_WAITING = 64;
const PING = Buffer.from('\r\n\r\n');

export class TcpTransport implements SipTransport {
  readonly protocol: 'tcp' | 'tls';
  private server: Server | undefined;
  private running = false;
  /** TLS: how each peer we connected to was verified, for reconnects. */
  private readonly peers = new Map<string, TlsPeer>();
  /** Connections new messages may use, by "host:port" (TLS ones we opened:
   *  and the peer they were verified as). */
  private readonly connections = new Map<string, Connection>();
  /** The latest usable connection to each "host:port". */
  private readonly byAddress = new Map<string, Connection>();
  /** Every socket still holding a descriptor, closing ones included. */
  private readonly open = new Set<Connection>();
  private readonly perSource = new Map<string, number>();
  private inboundCount = 0;
  private bound = { host: '', port: 0 };
  private sweeper: TimerHandle | undefined;
  private readonly idleTimeoutMs: number;
  private readonly closeGraceMs: number;
  private readonly maxPendingBytes: number;
  private readonly limits: TcpLimits;

  constructor(private readonly opts: TcpTransportOptions) {
    this.protocol = opts.tls ? 'tls' : 'tcp';
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
    this.closeGraceMs = opts.closeGraceMs ?? 1000;
    this.maxPendingBytes = opts.maxPendingBytes ?? 65_535;
    this.limits = {
      messageDeadlineMs: opts.messageDeadlineMs ?? DEFAULT_TCP_LIMITS.messageDeadlineMs,
      maxConnections: opts.maxConnections ?? DEFAULT_TCP_LIMITS.maxConnections,
      maxConnectionsPerSource:
        opts.maxConnectionsPerSource ?? DEFAULT_TCP_LIMITS.maxConnectionsPerSource,
    };
  }

  listen(): Promise<void> {
    this.running = true;
    const server = this.createListener();
    if (!server) {
      // TLS without a certificate of ours: connections we open only.
      this.bound = { host: this.opts.host, port: this.opts.port };
      this.scheduleSweep();
      return Promise.resolve();
    }
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        const a = server.address();
        if (a && typeof a === 'object') this.bound = { host: a.address, port: a.port };
        this.scheduleSweep();
        resolve();
      });
    });
  }

  private createListener(): Server | undefined {
    const secure = this.opts.tls;
    if (!secure) return createServer((socket) => this.accept(socket));
    if (!secure.server) return undefined;
    return createTlsListener(
      secure.server,
      this.limits.messageDeadlineMs,
      (socket) => this.accept(socket),
      () => {
        if (this.opts.counters) this.opts.counters.tlsHandshakeFailures++;
      },
    );
  }

  close(): Promise<void> {
    this.running = false;
    if (this.sweeper !== undefined) this.opts.clock.clearTimer(this.sweeper);
    this.sweeper = undefined;
    for (const c of [...this.open]) {
      this.clearTimers(c);
      c.socket.destroy();
    }
    this.connections.clear();
    this.byAddress.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  address(): { host: string; port: number } {
    return this.bound;
  }

  /** Sockets open (descriptors held), closing ones included. */
  connectionCount(): number {
    return this.open.size;
  }

  send(buf: Buffer, host: string, port: number, onError?: SendErrorHandler, peer?: TlsPeer): void {
    if (!this.running) {
      onError?.(new Error(`${this.protocol} transport closed`));
      return;
    }
    const address = `${host}:${port}`;
    // A TLS connection is reused only for the peer it was verified as: a
    // trunk with another CA bundle or name gets its own. Sends that name no
    // peer (responses, in-dialog requests) take the address's connection.
    let conn =
      this.opts.tls && peer
        ? this.connections.get(tlsKey(address, peer))
        : this.byAddress.get(address);
    if (!conn) {
      if (this.opts.tls) {
        if (peer) this.peers.set(address, peer);
        const known = peer ?? this.peers.get(address);
        conn = this.adopt(
          connectTls(this.opts.tls, host, port, known),
          host,
          port,
          false,
          true,
          tlsKey(address, known),
        );
      } else conn = this.adopt(connect({ host, port }), host, port, false, true);
    }
    conn.lastActivity = this.opts.clock.now();
    if (!conn.heard && onError && conn.waiting.length < MAX_WAITING) conn.waiting.push(onError);
    conn.socket.write(buf);
  }

  private accept(socket: Socket): void {
    const host = normaliseHost(socket.remoteAddress ?? '');
    const fromSource = this.perSource.get(host) ?? 0;
    if (
      this.inboundCount >= this.limits.maxConnections ||
      fromSource >= this.limits.maxConnectionsPerSource
    ) {
      // Over a cap: the descriptor goes at once, nothing is read.
      if (this.opts.counters) this.opts.counters.tcpClosedCap++;
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    this.inboundCount++;
    this.perSource.set(host, fromSource + 1);
    this.adopt(socket, host, socket.remotePort ?? 0, true, false);
  }

  private adopt(
    socket: Socket,
    host: string,
    port: number,
    inbound: boolean,
    connecting: boolean,
    key = `${host}:${port}`,
  ): Connection {
    const address = `${host}:${port}`;
    const conn: Connection = {
      key,
      socket,
      host,
      port,
      inbound,
      buffered: undefined,
      boundaryLineFeeds: 0,
      boundaryStart: 0,
      lastActivity: this.opts.clock.now(),
      connecting,
      heard: inbound,
      waiting: [],
      deadline: undefined,
      closing: undefined,
      pingSentAt: undefined,
    };
    this.connections.set(key, conn);
    this.byAddress.set(address, conn);
    this.open.add(conn);
    this.opts.onConnectionChange?.(true);
    socket.setNoDelay(true);
    if (connecting) {
      // TLS is up once the handshake verified the peer, not at the TCP connect.
      socket.once(this.opts.tls ? 'secureConnect' : 'connect', () => {
        conn.connecting = false;
      });
    }
    socket.on('data', (chunk: Buffer) => {
      if (!conn.heard) {
        conn.heard = true;
        conn.waiting = [];
      }
      this.onChunk(conn, chunk);
    });
    socket.on('error', (err) => {
      if (this.opts.tls && !conn.heard && isTlsFailure(err) && this.opts.counters)
        this.opts.counters.tlsHandshakeFailures++;
      this.failWaiting(conn, err);
    });
    socket.on('close', () => {
      this.failWaiting(conn, Object.assign(new Error('connection closed'), { code: 'ECONNRESET' }));
      this.clearTimers(conn);
      if (this.connections.get(key) === conn) this.connections.delete(key);
      if (this.byAddress.get(address) === conn) this.byAddress.delete(address);
      if (this.open.delete(conn) && conn.inbound) {
        this.inboundCount--;
        const n = (this.perSource.get(host) ?? 1) - 1;
        if (n > 0) this.perSource.set(host, n);
        else this.perSource.delete(host);
      }
      this.opts.onConnectionChange?.(false);
      if (!conn.inbound) this.opts.onFlowClosed?.(host, port);
    });
    return conn;
  }

  /** The connection died before the peer said anything: what we sent on it failed. */
  private failWaiting(conn: Connection, err: Error): void {
    const waiting = conn.waiting;
    conn.waiting = [];
    for (const cb of waiting) cb(err);
  }

  private onChunk(conn: Connection, chunk: Buffer): void {
    if (conn.closing !== undefined) return;
    let buf = conn.buffered ? Buffer.concat([conn.buffered, chunk]) : chunk;
    let offset = 0;
    let completed = false;
    for (;;) {
      // Between messages: CRLFs are skipped (RFC 3261 §7.5); a double CRLF
      // is a keep-alive ping answered with one CRLF (RFC 5626 §4.4.1). Like
      // a message, a ping split across reads must be complete within the
      // deadline; a CRLF left alone longer was a lone one.
      while (offset < buf.length && (buf[offset] === 0x0d || buf[offset] === 0x0a)) {
        if (buf[offset] === 0x0a) this.lineFeed(conn);
        offset++;
      }
      if (offset >= buf.length) break;
      conn.boundaryLineFeeds = 0;
      let len: number;
      try {
        len = this.opts.framer(buf, offset);
      } catch {
        len = -2;
      }
      if (len === -1) {
        if (buf.length - offset > this.maxPendingBytes) len = -2;
        else break;
      }
      if (len <= 0) {
        // The stream can't be delimited any more: drop the connection.
        this.opts.onFramingError?.();
        conn.buffered = undefined;
        this.destroy(conn);
        return;
      }
      const frame = buf.subarray(offset, offset + len);
      offset += len;
      completed = true;
      conn.lastActivity = this.opts.clock.now();
      this.opts.onData(frame, { transport: this.protocol, host: conn.host, port: conn.port });
      // The layer above may have closed us (transport stopped).
      if (conn.closing !== undefined || conn.socket.destroyed) return;
    }
    if (offset >= buf.length) {
      conn.buffered = undefined;
      this.stopDeadline(conn);
      return;
    }
    // Copy the tail so the big chunk it came from can be freed.
    buf = Buffer.from(buf.subarray(offset));
    conn.buffered = buf;
    // The tail is a message begun in this chunk (its deadline starts now) or
    // the rest of one whose deadline is already running.
    if (completed) this.stopDeadline(conn);
    if (conn.deadline === undefined) {
      conn.deadline = this.opts.clock.setTimer(() => {
        conn.deadline = undefined;
        if (this.opts.counters) this.opts.counters.tcpClosedDeadline++;
        this.destroy(conn);
      }, this.limits.messageDeadlineMs);
    }
  }

  private lineFeed(conn: Connection): void {
    const now = this.opts.clock.now();
    if (conn.pingSentAt !== undefined) {
      // The pong to our keep-alive (RFC 5626 §4.4.1): the flow is alive.
      conn.pingSentAt = undefined;
      conn.boundaryLineFeeds = 0;
      conn.lastActivity = now;
      return;
    }
    if (conn.boundaryLineFeeds === 1 && now - conn.boundaryStart >= this.limits.messageDeadlineMs)
      conn.boundaryLineFeeds = 0;
    if (++conn.boundaryLineFeeds === 1) {
      conn.boundaryStart = now;
      return;
    }
    conn.boundaryLineFeeds = 0;
    conn.lastActivity = now;
    if (this.opts.counters) this.opts.counters.tcpKeepAlivePongs++;
    conn.socket.write(PONG);
  }

  private stopDeadline(conn: Connection): void {
    if (conn.deadline === undefined) return;
    this.opts.clock.clearTimer(conn.deadline);
    conn.deadline = undefined;
  }

  private clearTimers(conn: Connection): void {
    this.stopDeadline(conn);
    if (conn.closing !== undefined && conn.closing !== true)
      this.opts.clock.clearTimer(conn.closing);
    conn.closing = true;
  }

  /** Takes a connection out of use; its descriptor goes now. */
  private destroy(conn: Connection): void {
    this.retire(conn);
    this.clearTimers(conn);
    conn.buffered = undefined;
    conn.socket.destroy();
  }

  /** Idle close: FIN now, the descriptor at the latest after the grace. */
  private closeIdle(conn: Connection): void {
    this.retire(conn);
    this.stopDeadline(conn);
    conn.buffered = undefined;
    conn.closing = this.opts.clock.setTimer(() => {
      conn.closing = true;
      conn.socket.destroy();
    }, this.closeGraceMs);
    conn.socket.end();
  }

  /** New sends to this peer will open a new connection. */
  private retire(conn: Connection): void {
    if (this.connections.get(conn.key) === conn) this.connections.delete(conn.key);
    const address = `${conn.host}:${conn.port}`;
    if (this.byAddress.get(address) === conn) this.byAddress.delete(address);
  }

  private scheduleSweep(): void {
    // Often enough that an idle connection goes within a quarter of the
    // timeout (at most a second) after it; cheap for a thousand connections.
    const every = Math.min(1000, Math.max(50, Math.floor(this.idleTimeoutMs / 4)));
    this.sweeper = this.opts.clock.setTimer(() => {
      const now = this.opts.clock.now();
      const cutoff = now - this.idleTimeoutMs;
      for (const c of this.open) {
        if (this.keepAlive(c, now)) continue;
        // A message in progress is bounded by its deadline instead.
        if (c.closing === undefined && c.deadline === undefined && c.lastActivity <= cutoff) {
          if (this.opts.counters) this.opts.counters.tcpClosedIdle++;
          this.closeIdle(c);
        }
      }
      if (this.running) this.scheduleSweep();
    }, every);
  }

  /** RFC 5626 §4.4.1 on a TLS connection we opened: ping when quiet, drop it
   *  when the pong is late. True when the connection was dealt with. */
  private keepAlive(c: Connection, now: number): boolean {
    const secure = this.opts.tls;
    if (!secure || secure.keepAliveIntervalMs <= 0) return false;
    if (c.inbound || c.connecting || c.closing !== undefined) return false;
    if (c.pingSentAt !== undefined) {
      if (now - c.pingSentAt < secure.keepAliveTimeoutMs) return true;
      if (this.opts.counters) this.opts.counters.keepAliveTimeouts++;
      this.destroy(c);
      return true;
    }
    if (now - c.lastActivity < secure.keepAliveIntervalMs) return false;
    c.pingSentAt = now;
    if (this.opts.counters) this.opts.counters.keepAlivePingsSent++;
    c.socket.write(PING);
    return true;
  }
}

/** "::ffff:127.0.0.1" → "127.0.0.1", so keys match what callers pass. */
export function normaliseHost(host: string): string {
  return host.startsWith('::ffff:') && host.includes('.') ? host.slice(7) : host;
}
