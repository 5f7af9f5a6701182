// Transport layer: rport/received, bad datagrams, 400 replies, TCP framing,
// connection reuse and idle close; RFC 3263 resolution with a fake resolver.

import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { SipMessage } from '../message/types.js';
import { getHeader } from '../message/index.js';
import { systemClock } from './clock.js';
import { resolveTarget, type DnsResolver } from './resolver.js';
import { createSipStats } from './stats.js';
import { TransportLayer } from './transport-layer.js';
import type { Endpoint } from './types.js';

const OPTIONS = (branch: string, via = '127.0.0.1:5999;rport') =>
  `OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP ${via};branch=${branch}\r\nMax-Forwards: 70\r\n` +
  `From: <sip:a@x>;tag=1\r\nTo: <sip:gw@x>\r\nCall-ID: ${branch}\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`;

let layer: TransportLayer | undefined;
afterEach(async () => {
  await layer?.stop();
  layer = undefined;
});

async function start(idleMs?: number) {
  const stats = createSipStats();
  const got: Array<{ msg: SipMessage; source: Endpoint }> = [];
  layer = new TransportLayer({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: { host: '127.0.0.1', port: 0 },
    clock: systemClock,
    stats,
    tcpIdleTimeoutMs: idleMs,
  });
  layer.onMessage((msg, source) => got.push({ msg, source }));
  await layer.start();
  return { stats, got, layer };
}

const until = async (cond: () => boolean, ms = 2000) => {
  for (let t = 0; t < ms && !cond(); t += 10) await new Promise((r) => setTimeout(r, 10));
};

describe('UDP receive path', () => {
  it('stamps received and rport on the top Via (RFC 3581 §4)', async () => {
    const { got, layer } = await start();
    layer.receive(Buffer.from(OPTIONS('z9hG4bK1', '10.9.9.9:5999;rport')), {
      transport: 'udp',
      host: '127.0.0.1',
      port: 40000,
    });
    const via = getHeader(got[0]!.msg, 'via')!;
    expect(via).toContain('received=127.0.0.1');
    expect(via).toContain('rport=40000');
  });

  it('drops garbage, answers an unparsable request 400, and keeps serving', async () => {
    const { got, stats, layer } = await start();
    const client = createSocket('udp4');
    const replies: string[] = [];
    client.on('message', (m) => replies.push(m.toString()));
    await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
    const port = layer.localAddress('udp').port;
    client.send(Buffer.from([0, 1, 2, 3, 255]), port, '127.0.0.1');
    const broken = OPTIONS('z9hG4bK2')
      .replace('CSeq: 1 OPTIONS', 'CSeq: one OPTIONS')
      .replace('Max-Forwards: 70', 'Max-Forwards: 70\r\nbad header line');
    client.send(Buffer.from(broken), port, '127.0.0.1');
    client.send(Buffer.from(OPTIONS('z9hG4bK3')), port, '127.0.0.1');
    await until(() => got.length === 1 && replies.length >= 1);
    client.close();
    expect(stats.parseErrorsDropped).toBe(2);
    expect(got).toHaveLength(1);
    expect(replies[0]).toMatch(/^SIP\/2\.0 400 /);
    expect(replies[0]).toContain('branch=z9hG4bK2');
  });
});

describe('TCP', () => {
  it('frames split and coalesced messages by Content-Length, then reuses the connection', async () => {
    const { got, layer, stats } = await start();
    const port = layer.localAddress('tcp').port;
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    const a = OPTIONS('z9hG4bKa').replace('UDP', 'TCP');
    const b = OPTIONS('z9hG4bKb').replace('UDP', 'TCP');
    sock.write(a.slice(0, 30));
    await new Promise((r) => setTimeout(r, 20));
    sock.write(a.slice(30) + '\r\n\r\n' + b);
    await until(() => got.length === 2);
    expect(got.map((g) => getHeader(g.msg, 'call-id'))).toEqual(['z9hG4bKa', 'z9hG4bKb']);
    // A reply to the source goes back on the same connection.
    const data: string[] = [];
    sock.on('data', (d) => data.push(d.toString()));
    layer.sendBuffer(Buffer.from('SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'), got[0]!.source);
    await until(() => data.length > 0);
    expect(data.join('')).toContain('200 OK');
    expect(stats.tcpConnectionsOpened).toBe(1);
    sock.destroy();
  });

  it('closes idle connections', async () => {
    const { layer, stats } = await start(1000);
    const port = layer.localAddress('tcp').port;
    const sock = connect(port, '127.0.0.1');
    const closed = new Promise((r) => sock.once('close', r));
    await closed;
    await until(() => stats.tcpConnectionsClosed === 1);
    expect(stats.tcpConnectionsClosed).toBe(1);
  }, 5000);

  it('reports a refused connection to the sender', async () => {
    const { layer } = await start();
    const err = await new Promise<Error>((resolve) =>
      layer.sendBuffer(Buffer.from('x'), { transport: 'tcp', host: '127.0.0.1', port: 1 }, resolve),
    );
    expect(err.message).toMatch(/ECONNREFUSED/);
  });
});

describe('RFC 3263 resolution', () => {
  const fake: DnsResolver = {
    resolveSrv: async (name) =>
      name === '_sip._udp.trunk.test'
        ? [
            { name: 'b.trunk.test', port: 5070, priority: 20, weight: 0 },
            { name: 'a.trunk.test', port: 5080, priority: 10, weight: 0 },
          ]
        : [],
    resolve4: async (name) =>
      ({
        'a.trunk.test': ['192.0.2.1'],
        'b.trunk.test': ['192.0.2.2'],
        'plain.test': ['192.0.2.9'],
      })[name] ?? [],
    resolve6: async () => [],
  };

  it('IP literals skip DNS', async () => {
    expect(await resolveTarget({ host: '127.0.0.1', transport: 'udp' }, fake)).toEqual([
      { transport: 'udp', host: '127.0.0.1', port: 5060 },
    ]);
  });

  it('no port: SRV by priority, then A', async () => {
    expect(await resolveTarget({ host: 'trunk.test', transport: 'udp' }, fake)).toEqual([
      { transport: 'udp', host: '192.0.2.1', port: 5080 },
      { transport: 'udp', host: '192.0.2.2', port: 5070 },
    ]);
  });

  it('explicit port: A/AAAA only', async () => {
    expect(await resolveTarget({ host: 'plain.test', port: 5099, transport: 'tcp' }, fake)).toEqual(
      [{ transport: 'tcp', host: '192.0.2.9', port: 5099 }],
    );
  });

  it('nothing resolves: dns_failure', async () => {
    await expect(
      resolveTarget({ host: 'nope.test', transport: 'udp' }, fake),
    ).rejects.toMatchObject({ code: 'dns_failure' });
  });
});
