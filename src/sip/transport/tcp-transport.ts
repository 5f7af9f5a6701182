// TCP transport: a listener plus a pool of connections keyed by remote address,
// reused in both directions (RFC 3261 §18.2.2, §18.3), framed by Content-Length.

import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Clock, TimerHandle } from './clock.js';
import type { RawReceiver, SendErrorHandler, SipTransport } from './types.js';

/** Returns the length of the message starting at `offset`, -1 when more bytes
 *  are needed; throws when the stream cannot be framed. */
export type StreamFramer = (buf: Buffer, offset: number) => number;

export interface TcpTransportOptions {
  host: string;
  port: number;
  onData: RawReceiver;
  framer: StreamFramer;
  clock: Clock;
  /** Close a connection without traffic for this long. Default 60 000 ms. */
  idleTimeoutMs?: number;
  /** A stream whose framing broke (bytes we can't delimit). */
  onFramingError?: () => void;
  onConnectionChange?: (opened: boolean) => void;
}

/** A connection; `pending` collects send-error handlers until it is up. */
interface Connection {
  key: string;
  socket: Socket;
  host: string;
  port: number;
  buffered: Buffer | undefined;
  lastActivity: number;
  connecting: boolean;
  waiting: SendErrorHandler[];
}

const MAX_FRAME_BYTES = 65_535;

export class TcpTransport implements SipTransport {
  readonly protocol = 'tcp' as const;
  private server: Server | undefined;
  private readonly connections = new Map<string, Connection>();
  private bound = { host: '', port: 0 };
  private sweeper: TimerHandle | undefined;
  private readonly idleTimeoutMs: number;

  constructor(private readonly opts: TcpTransportOptions) {
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
  }

  listen(): Promise<void> {
    const server = createServer((socket) => {
      const host = normaliseHost(socket.remoteAddress ?? '');
      this.adopt(socket, host, socket.remotePort ?? 0, false);
    });
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

  close(): Promise<void> {
    if (this.sweeper !== undefined) this.opts.clock.clearTimer(this.sweeper);
    this.sweeper = undefined;
    for (const c of this.connections.values()) c.socket.destroy();
    this.connections.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  address(): { host: string; port: number } {
    return this.bound;
  }

  /** Number of open connections (for tests and stats). */
  connectionCount(): number {
    return this.connections.size;
  }

  send(buf: Buffer, host: string, port: number, onError?: SendErrorHandler): void {
    if (!this.server) {
      onError?.(new Error('tcp transport closed'));
      return;
    }
    const key = `${host}:${port}`;
    let conn = this.connections.get(key);
    if (!conn) {
      const socket = connect({ host, port });
      conn = this.adopt(socket, host, port, true);
    }
    conn.lastActivity = this.opts.clock.now();
    if (conn.connecting && onError) conn.waiting.push(onError);
    conn.socket.write(buf);
  }

  private adopt(socket: Socket, host: string, port: number, connecting: boolean): Connection {
    const key = `${host}:${port}`;
    const conn: Connection = {
      key,
      socket,
      host,
      port,
      buffered: undefined,
      lastActivity: this.opts.clock.now(),
      connecting,
      waiting: [],
    };
    this.connections.set(key, conn);
    this.opts.onConnectionChange?.(true);
    socket.setNoDelay(true);
    if (connecting) {
      socket.once('connect', () => {
        conn.connecting = false;
        conn.waiting = [];
      });
    }
    socket.on('data', (chunk) => this.onChunk(conn, chunk));
    socket.on('error', (err) => {
      const waiting = conn.waiting;
      conn.waiting = [];
      for (const cb of waiting) cb(err);
    });
    socket.on('close', () => {
      if (this.connections.get(key) === conn) this.connections.delete(key);
      this.opts.onConnectionChange?.(false);
    });
    return conn;
  }

  private onChunk(conn: Connection, chunk: Buffer): void {
    conn.lastActivity = this.opts.clock.now();
    let buf = conn.buffered ? Buffer.concat([conn.buffered, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      // RFC 5626 §3.5.1 keep-alive CRLFs between messages are skipped.
      while (offset < buf.length && (buf[offset] === 0x0d || buf[offset] === 0x0a)) offset++;
      if (offset >= buf.length) break;
      let len: number;
      try {
        len = this.opts.framer(buf, offset);
      } catch {
        len = -2;
      }
      if (len === -1) {
        if (buf.length - offset > MAX_FRAME_BYTES) len = -2;
        else break;
      }
      if (len <= 0) {
        // The stream can't be delimited any more: drop the connection.
        this.opts.onFramingError?.();
        conn.buffered = undefined;
        conn.socket.destroy();
        return;
      }
      const frame = buf.subarray(offset, offset + len);
      offset += len;
      this.opts.onData(frame, { transport: 'tcp', host: conn.host, port: conn.port });
    }
    if (offset >= buf.length) conn.buffered = undefined;
    else {
      // Copy the tail so the big chunk it came from can be freed.
      buf = Buffer.from(buf.subarray(offset));
      conn.buffered = buf;
    }
  }

  private scheduleSweep(): void {
    const every = Math.max(1000, Math.floor(this.idleTimeoutMs / 2));
    this.sweeper = this.opts.clock.setTimer(() => {
      const cutoff = this.opts.clock.now() - this.idleTimeoutMs;
      for (const c of this.connections.values()) {
        if (c.lastActivity <= cutoff) c.socket.end();
      }
      if (this.server) this.scheduleSweep();
    }, every);
  }
}

/** "::ffff:127.0.0.1" → "127.0.0.1", so keys match what callers pass. */
export function normaliseHost(host: string): string {
  return host.startsWith('::ffff:') && host.includes('.') ? host.slice(7) : host;
}
