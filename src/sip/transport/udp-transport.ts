// UDP transport: one socket, one datagram per message (RFC 3261 §18.1.1).

import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { RawReceiver, SendErrorHandler, SipTransport } from './types.js';
import { runUrgentWork } from '../../urgent-work.js';

export interface UdpTransportOptions {
  host: string;
  port: number;
  onData: RawReceiver;
  /** Socket-level error (not per message); the socket stays open. */
  onSocketError?: (err: Error) => void;
  /** SO_RCVBUF asked for, bytes (the kernel caps it at net.core.rmem_max); default the OS's. */
  recvBufferSize?: number;
  /** SO_SNDBUF asked for, bytes (capped at net.core.wmem_max); default the OS's. */
  sendBufferSize?: number;
}

/** What the kernel granted: Linux reports twice the size set (its bookkeeping
 *  share, socket(7)), capped at twice net.core.rmem_max / wmem_max. */
export interface UdpBufferSizes {
  recvBufferBytes: number;
  sendBufferBytes: number;
}

export class UdpTransport implements SipTransport {
  readonly protocol = 'udp' as const;
  private socket: Socket | undefined;
  private bound = { host: '', port: 0 };

  constructor(private readonly opts: UdpTransportOptions) {}

  listen(): Promise<void> {
    const { recvBufferSize, sendBufferSize } = this.opts;
    const socket = createSocket({
      type: isIPv6(this.opts.host) ? 'udp6' : 'udp4',
      ...(recvBufferSize ? { recvBufferSize } : {}),
      ...(sendBufferSize ? { sendBufferSize } : {}),
    });
    this.socket = socket;
    const onData = this.opts.onData;
    socket.on('message', (buf, rinfo) => {
      runUrgentWork(); // SIP handling can be long: pending media work first (urgent-work.ts)
      onData(buf, { transport: 'udp', host: rinfo.address, port: rinfo.port });
    });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.opts.port, this.opts.host, () => {
        socket.off('error', reject);
        socket.on('error', (err) => this.opts.onSocketError?.(err));
        const a = socket.address();
        this.bound = { host: a.address, port: a.port };
        resolve();
      });
    });
  }

  close(): Promise<void> {
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => socket.close(() => resolve()));
  }

  address(): { host: string; port: number } {
    return this.bound;
  }

  /** The socket's buffer sizes as the kernel reports them; undefined before bind. */
  bufferSizes(): UdpBufferSizes | undefined {
    const socket = this.socket;
    if (!socket) return undefined;
    try {
      return {
        recvBufferBytes: socket.getRecvBufferSize(),
        sendBufferBytes: socket.getSendBufferSize(),
      };
    } catch {
      return undefined;
    }
  }

  send(buf: Buffer, host: string, port: number, onError?: SendErrorHandler): void {
    const socket = this.socket;
    if (!socket) {
      onError?.(new Error('udp transport closed'));
      return;
    }
    socket.send(buf, port, host, (err) => {
      if (err) onError?.(err);
    });
  }
}
