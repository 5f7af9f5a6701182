import type { RemoteInfo, Socket } from 'node:dgram';

/**
 * Where a session's RTP goes, and the symmetric-RTP latch (RFC 4961): until
 * the far end's first packet, send to the SDP address; then send to the
 * address that packet came from and connect the socket to it, so the kernel
 * drops datagrams from anyone else and sends skip Node's per-packet address
 * lookup. A new SDP address disconnects and starts over.
 */
export class RtpTransmitter {
  address = '';
  port = 0;
  private latched = false;
  private connected = false;
  private connecting = false;
  sendErrors = 0;
  foreignPackets = 0;

  constructor(
    private readonly socket: Socket,
    private readonly symmetric: boolean,
  ) {}

  /** Points sending at a (new) SDP address and forgets the latch. */
  retarget(address: string, port: number): void {
    if (this.connected || this.connecting) {
      try {
        this.socket.disconnect();
      } catch {
        // not connected yet: the pending connect is abandoned below
      }
    }
    this.connected = false;
    this.connecting = false;
    this.latched = false;
    this.address = address;
    this.port = port;
  }

  /**
   * Checks a received packet's source. Returns 'latched' on the first one
   * (the caller announces it), 'ok', or 'foreign' for a packet to drop.
   */
  accept(rinfo: RemoteInfo): 'ok' | 'latched' | 'foreign' {
    if (!this.symmetric || this.connected) return 'ok'; // connected: the kernel filters
    if (!this.latched) {
      this.latched = true;
      this.address = rinfo.address;
      this.port = rinfo.port;
      this.connecting = true;
      const address = rinfo.address;
      const port = rinfo.port;
      this.socket.connect(port, address, () => {
        if (!this.connecting || this.address !== address || this.port !== port) return;
        this.connecting = false;
        this.connected = true;
      });
      return 'latched';
    }
    if (rinfo.port !== this.port || rinfo.address !== this.address) {
      this.foreignPackets++;
      return 'foreign';
    }
    return 'ok';
  }

  /** Sends a whole buffer (its length is the packet's). */
  send(buf: Buffer): void {
    try {
      if (this.connected) this.socket.send(buf);
      else this.socket.send(buf, this.port, this.address);
    } catch {
      this.sendErrors++; // e.g. a send racing a connect; the next frame goes out
    }
  }
}
