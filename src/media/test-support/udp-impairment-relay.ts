import { createSocket, type Socket } from 'node:dgram';
import { isRtcpInMux } from '../rtp-packet.js';

/**
 * A UDP relay between two media sessions on loopback that impairs the RTP
 * going from `a` to `b`: it drops one packet in `dropEvery` and holds one
 * in `reorderEvery` back until the next has passed. RTCP (muxed) and the
 * other direction pass untouched. Test fixture only.
 */
export class UdpImpairmentRelay {
  dropped = 0;
  reordered = 0;
  forwarded = 0;
  private held: Buffer | null = null;
  private index = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly aPort: number,
    private readonly bPort: number,
    private readonly dropEvery: number,
    private readonly reorderEvery: number,
  ) {
    socket.on('message', (msg, rinfo) => {
      if (rinfo.port === this.aPort) this.fromA(msg);
      else if (rinfo.port === this.bPort) this.socket.send(msg, this.aPort, '127.0.0.1');
    });
  }

  static async start(
    aPort: number,
    bPort: number,
    opts: { dropEvery: number; reorderEvery: number },
  ): Promise<UdpImpairmentRelay> {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
    return new UdpImpairmentRelay(s, aPort, bPort, opts.dropEvery, opts.reorderEvery);
  }

  get port(): number {
    return this.socket.address().port;
  }

  private fromA(msg: Buffer): void {
    if (isRtcpInMux(msg)) {
      this.socket.send(msg, this.bPort, '127.0.0.1');
      return;
    }
    const i = this.index++;
    if (i % this.dropEvery === this.dropEvery - 1) {
      this.dropped++;
      return;
    }
    if (i % this.reorderEvery === 2 && !this.held) {
      this.held = msg;
      return;
    }
    this.socket.send(msg, this.bPort, '127.0.0.1');
    this.forwarded++;
    if (this.held) {
      this.socket.send(this.held, this.bPort, '127.0.0.1');
      this.held = null;
      this.reordered++;
      this.forwarded++;
    }
  }

  close(): void {
    this.socket.close();
  }
}
