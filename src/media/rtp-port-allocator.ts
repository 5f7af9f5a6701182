import { createSocket, type Socket } from 'node:dgram';
import { MediaError } from './media-error.js';

/**
 * Hands out RTP/RTCP port pairs from a configured range: RTP on an even
 * port, RTCP on the odd one above (RFC 3550 §11). Ports are tried
 * round-robin from where the last allocation stopped, so a port released
 * by one call is reused only after the rest of the range has been offered,
 * and ports taken by other processes are skipped.
 */
export interface RtpPortRange {
  /** Lowest port (rounded up to even). */
  min: number;
  /** Highest port usable for RTCP (RTP at most max − 1). */
  max: number;
}

export interface RtpPortPair {
  port: number;
  rtp: Socket;
  rtcp: Socket;
}

function bindSocket(port: number, address: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket({ type: 'udp4' });
    const onError = (err: Error): void => {
      socket.close();
      reject(err);
    };
    socket.once('error', onError);
    socket.bind({ port, address, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

export class RtpPortAllocator {
  private readonly inUse = new Set<number>();
  private readonly first: number;
  private readonly last: number;
  private cursor: number;

  constructor(
    range: RtpPortRange,
    private readonly bindAddress: string,
  ) {
    this.first = range.min + (range.min % 2);
    this.last = range.max - 1 - ((range.max - 1) % 2);
    if (this.first > this.last || this.first < 1024 || range.max > 65535) {
      throw new RangeError(`bad RTP port range ${range.min}-${range.max}`);
    }
    this.cursor = this.first;
  }

  get capacity(): number {
    return (this.last - this.first) / 2 + 1;
  }

  get allocated(): number {
    return this.inUse.size;
  }

  async allocate(): Promise<RtpPortPair> {
    for (let tries = 0; tries < this.capacity; tries++) {
      const port = this.cursor;
      this.cursor = port + 2 > this.last ? this.first : port + 2;
      if (this.inUse.has(port)) continue;
      this.inUse.add(port); // reserve before awaiting, so concurrent calls skip it
      let rtp: Socket | undefined;
      try {
        rtp = await bindSocket(port, this.bindAddress);
        const rtcp = await bindSocket(port + 1, this.bindAddress);
        return { port, rtp, rtcp };
      } catch {
        rtp?.close();
        this.inUse.delete(port);
      }
    }
    throw new MediaError('no_rtp_port_available', 'no free RTP port pair in the range');
  }

  /** Makes the pair available again; the caller closes the sockets. */
  release(port: number): void {
    this.inUse.delete(port);
  }
}
