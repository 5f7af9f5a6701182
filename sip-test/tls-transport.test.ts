// SIP over TLS between two of our stream transports on loopback, with a test
// PKI made at run time: the trunk's certificate verified against its CA
// bundle and its name, a certificate from an unknown CA or for another name
// refused with the TLS error, mutual TLS, and the RFC 5626 keep-alive that
// keeps a live flow and drops a dead one.

import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findMessageLength } from '../src/sip/message/index.js';
import { systemClock } from '../src/sip/transport/clock.js';
import { createSipStats, type SipStats } from '../src/sip/transport/stats.js';
import { TcpTransport, type StreamTlsOptions } from '../src/sip/transport/tcp-transport.js';
import { describeTransportError } from '../src/sip/transport/tls-errors.js';
import { TlsProfiles } from '../src/sip/transport/tls-profiles.js';
import type { Endpoint, TlsPeer } from '../src/sip/transport/types.js';
import { createTestPki, type TestPki } from './support/test-pki.js';

const OPTIONS = (n: number): Buffer =>
  Buffer.from(
    `OPTIONS sip:gw@localhost SIP/2.0\r\nVia: SIP/2.0/TLS 127.0.0.1:5999;branch=z9hG4bK${n}\r\n` +
      `Max-Forwards: 70\r\nFrom: <sip:a@x>;tag=1\r\nTo: <sip:gw@x>\r\nCall-ID: c${n}\r\n` +
      `CSeq: ${n} OPTIONS\r\nContent-Length: 0\r\n\r\n`,
  );

let pki: TestPki;
beforeAll(async () => {
  pki = await createTestPki();
}, 30_000);
afterAll(async () => {
  await pki?.cleanup();
});

interface Side {
  t: TcpTransport;
  /** Connections we opened that closed, as host:port. */
  flowsClosed: string[];
  stats: SipStats;
  frames: Array<{ text: string; from: Endpoint }>;
  profiles: TlsProfiles;
  port: number;
}

const open: TcpTransport[] = [];
const servers: TlsServer[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
  for (const s of servers.splice(0)) s.close();
});

async function side(tls: Partial<StreamTlsOptions>): Promise<Side> {
  const stats = createSipStats();
  const frames: Side['frames'] = [];
  const flowsClosed: string[] = [];
  const profiles = new TlsProfiles();
  const t = new TcpTransport({
    host: '127.0.0.1',
    port: 0,
    clock: systemClock,
    counters: stats,
    framer: findMessageLength,
    onData: (buf, from) => frames.push({ text: buf.toString(), from }),
    onFlowClosed: (host, port) => flowsClosed.push(`${host}:${port}`),
    tls: {
      keepAliveIntervalMs: 0,
      keepAliveTimeoutMs: 10_000,
      contextFor: (p) => profiles.contextFor(p),
      ...tls,
    },
  });
  open.push(t);
  await t.listen();
  return { t, stats, frames, flowsClosed, profiles, port: t.address().port };
}

const until = async (cond: () => boolean, ms = 5000): Promise<void> => {
  for (let waited = 0; !cond(); waited += 10) {
    if (waited > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Sends and resolves with the transport's error, or undefined once `delivered` holds. */
function sendAndSettle(
  from: Side,
  port: number,
  peer: TlsPeer,
  delivered: () => boolean,
): Promise<Error | undefined> {
  return new Promise((resolve) => {
    from.t.send(OPTIONS(1), '127.0.0.1', port, (err) => resolve(err), peer);
    void until(delivered, 5000).then(
      () => resolve(undefined),
      () => undefined,
    );
  });
}

describe('SIP over TLS between stream transports', () => {
  it('gateway-to-trunk: verified against the trunk CA bundle and its name; the answer comes back on the same connection', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({});
    gw.profiles.set('trunk-1', { ca: pki.ca.certPem });
    const err = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 'trunk-1' },
      () => trunk.frames.length === 1,
    );
    expect(err).toBeUndefined();
    expect(trunk.frames[0]!.text).toContain('OPTIONS sip:gw@localhost');
    expect(trunk.frames[0]!.from.transport).toBe('tls');
    // The trunk answers to where the request came from: our connection.
    const from = trunk.frames[0]!.from;
    trunk.t.send(OPTIONS(2), from.host, from.port);
    await until(() => gw.frames.length === 1);
    expect(gw.frames[0]!.text).toContain('CSeq: 2 OPTIONS');
    expect(gw.t.connectionCount()).toBe(1);
    expect(gw.stats.tlsHandshakeFailures).toBe(0);
  });

  it('the trunk closing our connection is reported as a closed flow (what re-registers a binding)', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({});
    gw.profiles.set('t', { ca: pki.ca.certPem });
    await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 't' },
      () => trunk.frames.length === 1,
    );
    expect(gw.flowsClosed).toEqual([]);
    await trunk.t.close();
    await until(() => gw.flowsClosed.length === 1);
    expect(gw.flowsClosed).toEqual([`127.0.0.1:${trunk.port}`]);
    // The trunk saw no flow of its own close: the connection was not one it opened.
    expect(trunk.flowsClosed).toEqual([]);
  });

  it('gateway-to-trunk with a certificate from an unknown CA: refused with the TLS error, nothing delivered', async () => {
    const rogue = await side({
      server: { cert: pki.rogueServer.certPem, key: pki.rogueServer.keyPem },
    });
    const gw = await side({});
    gw.profiles.set('trunk-1', { ca: pki.ca.certPem });
    const err = await sendAndSettle(
      gw,
      rogue.port,
      { serverName: 'localhost', profile: 'trunk-1' },
      () => rogue.frames.length > 0,
    );
    expect(err).toBeInstanceOf(Error);
    expect(describeTransportError(err!, 'tls')).toMatch(
      /^tls: certificate not trusted \([A-Z_]+\)$/,
    );
    expect(rogue.frames).toHaveLength(0);
    expect(gw.stats.tlsHandshakeFailures).toBe(1);
  });

  it('a connection verified for one trunk is not reused by another trunk at the same address that trusts less', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({});
    gw.profiles.set('trusting', { ca: pki.ca.certPem });
    const first = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 'trusting' },
      () => trunk.frames.length === 1,
    );
    expect(first).toBeUndefined();
    const second = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 'system-cas' },
      () => trunk.frames.length === 2,
    );
    expect(second && describeTransportError(second, 'tls')).toMatch(
      /^tls: certificate not trusted/,
    );
    expect(trunk.frames).toHaveLength(1);
  });

  it('gateway-to-trunk without the CA bundle: the system CAs do not know the test CA, refused', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({});
    const err = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost' },
      () => trunk.frames.length > 0,
    );
    expect(err && describeTransportError(err, 'tls')).toMatch(/^tls: certificate not trusted/);
  });

  it('gateway-to-trunk whose certificate names another host: refused as a name mismatch', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({});
    gw.profiles.set('trunk-1', { ca: pki.ca.certPem });
    const err = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'sip.carrier.example', profile: 'trunk-1' },
      () => trunk.frames.length > 0,
    );
    expect(err && describeTransportError(err, 'tls')).toBe(
      'tls: certificate does not name the trunk host (ERR_TLS_CERT_ALTNAME_INVALID)',
    );
    expect(trunk.frames).toHaveLength(0);
  });

  it('mutual TLS: a trunk requiring a client certificate refuses us without one and accepts the trunk profile’s', async () => {
    const trunk = await side({
      server: {
        cert: pki.server.certPem,
        key: pki.server.keyPem,
        ca: pki.ca.certPem,
        requestClientCert: true,
      },
    });
    const anonymous = await side({});
    anonymous.profiles.set('t', { ca: pki.ca.certPem });
    const refused = await sendAndSettle(
      anonymous,
      trunk.port,
      { serverName: 'localhost', profile: 't' },
      () => trunk.frames.length > 0,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(trunk.frames).toHaveLength(0);
    await until(() => trunk.stats.tlsHandshakeFailures === 1);

    const gw = await side({});
    gw.profiles.set('t', { ca: pki.ca.certPem, cert: pki.client.certPem, key: pki.client.keyPem });
    const err = await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 't' },
      () => trunk.frames.length === 1,
    );
    expect(err).toBeUndefined();
  });

  it('RFC 5626 keep-alive: a peer that answers the ping keeps the flow; one that does not is dropped', async () => {
    const trunk = await side({ server: { cert: pki.server.certPem, key: pki.server.keyPem } });
    const gw = await side({ keepAliveIntervalMs: 200, keepAliveTimeoutMs: 400 });
    gw.profiles.set('t', { ca: pki.ca.certPem });
    await sendAndSettle(
      gw,
      trunk.port,
      { serverName: 'localhost', profile: 't' },
      () => trunk.frames.length === 1,
    );
    await until(() => gw.stats.keepAlivePingsSent >= 3, 10_000);
    expect(trunk.stats.tcpKeepAlivePongs).toBeGreaterThanOrEqual(2);
    expect(gw.stats.keepAliveTimeouts).toBe(0);
    expect(gw.t.connectionCount()).toBe(1);

    // A TLS server that reads and never answers.
    const mute = createTlsServer({ cert: pki.server.certPem, key: pki.server.keyPem }, (s) =>
      s.on('data', () => undefined),
    );
    servers.push(mute);
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    const mutePort = (mute.address() as { port: number }).port;
    gw.t.send(OPTIONS(3), '127.0.0.1', mutePort, undefined, {
      serverName: 'localhost',
      profile: 't',
    });
    await until(() => gw.stats.keepAliveTimeouts === 1, 10_000);
    await until(() => gw.t.connectionCount() === 1, 5000);
  }, 30_000);
});
