// TCP transport bounds on loopback sockets, timed by the fake clock: the
// message deadline, the full idle close, the caps, the unframed-bytes cap and
// RFC 5626 keep-alive pongs.

import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { findMessageLength } from '../message/index.js';
import { FakeClock } from './fake-clock.js';
import { createSipStats, type SipStats } from './stats.js';
import { TcpTransport, type TcpTransportOptions } from './tcp-transport.js';

const OPTIONS =
  'OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5999;branch=z9hG4bK1\r\n' +
  'Max-Forwards: 70\r\nFrom: <sip:a@x>;tag=1\r\nTo: <sip:gw@x>\r\nCall-ID: c1\r\n' +
  'CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n';

interface Harness {
  t: TcpTransport;
  clock: FakeClock;
  stats: SipStats;
  frames: string[];
  /** Bytes the transport has been handed so far (every chunk goes through the framer). */
  framed: () => number;
  port: number;
}

const transports: TcpTransport[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  for (const t of transports.splice(0)) await t.close();
});

async function start(opts: Partial<TcpTransportOptions> = {}): Promise<Harness> {
  const clock = new FakeClock();
  const stats = createSipStats();
  const frames: string[] = [];
  let framerCalls = 0;
  const t = new TcpTransport({
    host: '127.0.0.1',
    port: 0,
    clock,
    counters: stats,
    idleTimeoutMs: 4000,
    messageDeadlineMs: 1000,
    onData: (buf) => frames.push(buf.toString()),
    framer: (buf, offset) => {
      framerCalls++;
      return findMessageLength(buf, offset);
    },
    onFramingError: () => stats.parseErrorsDropped++,
    ...opts,
  });
  transports.push(t);
  await t.listen();
  return { t, clock, stats, frames, framed: () => framerCalls, port: t.address().port };
}

const until = async (cond: () => boolean, ms = 2000): Promise<void> => {
  for (let waited = 0; !cond(); waited += 5) {
    if (waited >= ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

interface Client {
  sock: Socket;
  received: () => string;
  closed: () => boolean;
  ended: () => boolean;
  /** The server closed or reset it. */
  gone: () => boolean;
}

/** A peer that never closes its side by itself (as a slowloris would not). */
async function client(port: number, localAddress = '127.0.0.1'): Promise<Client> {
  const sock = connect({ port, host: '127.0.0.1', localAddress, allowHalfOpen: true });
  clients.push(sock);
  let data = '';
  let closed = false;
  let ended = false;
  sock.on('data', (d) => (data += d.toString()));
  sock.on('end', () => (ended = true));
  sock.on('close', () => (closed = true));
  sock.on('error', () => undefined);
  await new Promise((r) => sock.once('connect', r));
  return {
    sock,
    received: () => data,
    closed: () => closed,
    ended: () => ended,
    gone: () => ended || closed,
  };
}

/** Writes and waits until the transport has read it. */
async function send(h: Harness, c: Client, text: string): Promise<void> {
  const before = h.framed();
  const pongsBefore = h.stats.tcpKeepAlivePongs;
  c.sock.write(text);
  if (/^[\r\n]*$/.test(text)) {
    // Line breaks alone never reach the framer: give the loop a moment.
    await until(() => h.stats.tcpKeepAlivePongs > pongsBefore || c.gone(), 50).catch(
      () => undefined,
    );
  } else await until(() => h.framed() > before || c.gone());
}

describe('message deadline', () => {
  it('destroys a connection whose message trickles past the deadline from its first byte', async () => {
    const h = await start();
    const c = await client(h.port);
    await until(() => h.t.connectionCount() === 1);
    // One byte every 300 ms: each byte is traffic, none restarts the deadline.
    for (let i = 0; i < 3; i++) {
      await send(h, c, OPTIONS[i]!);
      h.clock.advance(300);
    }
    await send(h, c, OPTIONS[3]!); // t = 900
    h.clock.advance(99);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.gone()).toBe(false);
    h.clock.advance(1); // t = 1000: the deadline of the first byte
    await until(() => c.gone());
    expect(h.stats.tcpClosedDeadline).toBe(1);
    expect(h.frames).toHaveLength(0);
    await until(() => h.t.connectionCount() === 0);
  });

  it('a complete message stops the deadline; the next message gets its own from its first byte', async () => {
    const h = await start();
    const c = await client(h.port);
    await send(h, c, OPTIONS.slice(0, 40));
    h.clock.advance(900);
    // The rest of the first message and the start of the second, together.
    await send(h, c, OPTIONS.slice(40) + OPTIONS.slice(0, 10));
    expect(h.frames).toHaveLength(1);
    h.clock.advance(900); // 1800 after the first byte of the first message
    await new Promise((r) => setTimeout(r, 20));
    expect(c.gone()).toBe(false);
    await send(h, c, OPTIONS.slice(10));
    expect(h.frames).toHaveLength(2);
    expect(h.clock.timerCount).toBe(1); // the idle sweeper only
    h.clock.advance(999);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.gone()).toBe(false);
    expect(h.stats.tcpClosedDeadline).toBe(0);
  });
});

describe('idle close', () => {
  it('sends FIN and destroys the socket after the grace even when the peer keeps its side open', async () => {
    const h = await start({ closeGraceMs: 500 });
    const c = await client(h.port);
    await until(() => h.t.connectionCount() === 1);
    h.clock.advance(3999);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.gone()).toBe(false);
    h.clock.advance(1); // the sweep at the idle timeout (it runs every second here)
    await until(() => c.ended());
    expect(h.stats.tcpClosedIdle).toBe(1);
    // Half-closed: the descriptor is still held, but not for long.
    expect(h.t.connectionCount()).toBe(1);
    expect(c.closed()).toBe(false);
    h.clock.advance(500);
    await until(() => h.t.connectionCount() === 0);
    expect(h.stats.tcpClosedIdle).toBe(1);
  });

  it('complete messages and keep-alive pings keep a connection; lone CRLFs and message bytes do not', async () => {
    // A CRLF a second (twice the deadline) apart from the last is a lone one.
    const h = await start({ messageDeadlineMs: 500 });
    const pinged = await client(h.port);
    const crlf = await client(h.port);
    const partial = await client(h.port);
    const messages = await client(h.port);
    await until(() => h.t.connectionCount() === 4);
    await send(h, partial, 'OPTI');
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1000);
      await send(h, pinged, '\r\n\r\n');
      await send(h, crlf, '\r\n');
      await send(h, messages, OPTIONS);
    }
    await until(() => crlf.ended());
    expect(partial.gone()).toBe(true); // its deadline, 0.5 s after "OPTI"
    expect(pinged.ended()).toBe(false);
    expect(messages.ended()).toBe(false);
    expect(h.stats).toMatchObject({ tcpClosedIdle: 1, tcpClosedDeadline: 1, tcpKeepAlivePongs: 5 });
  });

  it('an idle-closed connection is not used for sends: a new one is dialled', async () => {
    const far = await start({ idleTimeoutMs: 60_000 });
    const h = await start({ closeGraceMs: 60_000 });
    h.t.send(Buffer.from(OPTIONS), '127.0.0.1', far.port);
    await until(() => far.frames.length === 1);
    h.clock.advance(5000);
    await until(() => far.t.connectionCount() === 0 || h.stats.tcpClosedIdle === 1);
    expect(h.stats.tcpClosedIdle).toBe(1);
    h.t.send(Buffer.from(OPTIONS), '127.0.0.1', far.port);
    await until(() => far.frames.length === 2);
  });
});

describe('caps', () => {
  it('destroys a connection over the per-source or the total cap at once, and counts it', async () => {
    const h = await start({ maxConnections: 3, maxConnectionsPerSource: 2 });
    const a1 = await client(h.port, '127.0.0.1');
    const a2 = await client(h.port, '127.0.0.1');
    await until(() => h.t.connectionCount() === 2);
    const a3 = await client(h.port, '127.0.0.1');
    await until(() => a3.gone());
    expect(h.stats.tcpClosedCap).toBe(1);
    const b1 = await client(h.port, '127.0.0.2');
    await until(() => h.t.connectionCount() === 3);
    const b2 = await client(h.port, '127.0.0.2');
    await until(() => b2.gone());
    expect(h.stats.tcpClosedCap).toBe(2);
    expect(h.t.connectionCount()).toBe(3);
    // A slot freed is a slot to take.
    a1.sock.destroy();
    await until(() => h.t.connectionCount() === 2);
    const a4 = await client(h.port, '127.0.0.1');
    await until(() => h.t.connectionCount() === 3);
    await send(h, a4, OPTIONS);
    expect(h.frames).toHaveLength(1);
    expect([a2.gone(), b1.gone(), a4.gone()]).toEqual([false, false, false]);
  });

  it('our own outbound connections are not counted against the caps', async () => {
    const far = await start();
    const h = await start({ maxConnections: 1, maxConnectionsPerSource: 1 });
    await client(h.port);
    await until(() => h.t.connectionCount() === 1);
    h.t.send(Buffer.from(OPTIONS), '127.0.0.1', far.port);
    await until(() => far.frames.length === 1);
    expect(h.t.connectionCount()).toBe(2);
    expect(h.stats.tcpClosedCap).toBe(0);
  });

  it('caps the bytes a connection may hold without a complete message', async () => {
    const h = await start({ maxPendingBytes: 200 });
    const c = await client(h.port);
    await send(h, c, 'OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\n');
    c.sock.write(`X-Long: ${'a'.repeat(300)}\r\n`);
    await until(() => c.gone());
    expect(h.stats.parseErrorsDropped).toBe(1);
    expect(h.frames).toHaveLength(0);
  });
});

describe('RFC 5626 keep-alive', () => {
  it('answers a double CRLF with one CRLF, even split across reads; ignores a lone CRLF before a message', async () => {
    const h = await start();
    const c = await client(h.port);
    await send(h, c, '\r\n\r\n');
    await until(() => c.received() === '\r\n');
    await send(h, c, '\r\n\r');
    await send(h, c, '\n');
    await until(() => c.received() === '\r\n\r\n');
    await send(h, c, '\r\n' + OPTIONS);
    expect(h.frames).toEqual([OPTIONS]);
    await new Promise((r) => setTimeout(r, 30));
    expect(c.received()).toBe('\r\n\r\n');
    expect(h.stats.tcpKeepAlivePongs).toBe(2);
  });
});
