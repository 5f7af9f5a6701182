// The Kamailio test peer as a TLS edge, driven without the gateway: its
// certificate checked with openssl s_client and node:tls (the test CA, the
// rogue CA, mutual TLS), OPTIONS and CRLF keep-alives answered, and calls
// relayed over UDP to a SIPp UAS with the dialog's requests going through it
// both ways.
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from '../support/far-end.js';
import { startKamailio, type Kamailio, type KamailioOptions } from '../support/kamailio.js';
import { StreamSipClient, token, type StreamSipMessage } from '../support/stream-sip-client.js';
import { createTestPki, type TestPki } from '../support/test-pki.js';

let pki: TestPki;
const farEnds = new FarEnds();
const peers: Kamailio[] = [];
const clients: StreamSipClient[] = [];

beforeAll(async () => {
  pki = await createTestPki();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  farEnds.killAll();
  await Promise.all(peers.splice(0).map((k) => k.stop()));
});
afterAll(async () => {
  await pki?.cleanup();
});

async function kamailio(o: KamailioOptions): Promise<Kamailio> {
  const k = await startKamailio(o);
  peers.push(k);
  return k;
}

async function tlsClient(k: Kamailio, extra: { cert?: string; key?: string } = {}) {
  const c = await StreamSipClient.tls({ port: k.tlsPort!, ca: pki.ca.certPem, ...extra });
  clients.push(c);
  return c;
}

const tlsEdge = (o: Partial<KamailioOptions> = {}) =>
  kamailio({ tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath }, ...o });

/** `openssl s_client` against the TLS port: exit code and output. */
function sClient(port: number, caFile: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const args = ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', caFile];
    args.push('-verify_return_error', '-servername', 'localhost', '-verify_hostname', 'localhost');
    const p = spawn('/usr/bin/openssl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
    p.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    p.stdin.end();
  });
}

const options = (c: StreamSipClient, k: Kamailio) => {
  const callId = token('opt-');
  c.send(`OPTIONS sip:127.0.0.1:${k.tlsPort};transport=tls SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
Max-Forwards: 70
From: <sip:gw@localhost>;tag=${token()}
To: <sip:127.0.0.1:${k.tlsPort}>
Call-ID: ${callId}
CSeq: 1 OPTIONS
Content-Length: 0

`);
  return c.waitFor((m) => m.headers.get('call-id')?.[0] === callId);
};

/** The route set a UAC keeps from a 2xx: its Record-Route entries, reversed (RFC 3261 §12.1.2). */
const routeSet = (m: StreamSipMessage): string[] =>
  (m.headers.get('record-route') ?? []).flatMap((l) => l.split(/,\s*(?=<)/)).reverse();

describe('Kamailio as a TLS edge', () => {
  it('presents a certificate that verifies against the test CA and not against the rogue CA', async () => {
    const k = await tlsEdge();
    const good = await sClient(k.tlsPort!, pki.ca.certPath);
    expect(good.out).toContain('Verify return code: 0 (ok)');
    expect(good.code).toBe(0);
    const rogue = await sClient(k.tlsPort!, pki.rogueCa.certPath);
    expect(rogue.out).toMatch(/verify error/);
    expect(rogue.code).not.toBe(0);

    // and the other way round: an edge presenting the rogue certificate is refused by node:tls
    const r = await kamailio({
      tls: { certPath: pki.rogueServer.certPath, keyPath: pki.rogueServer.keyPath },
    });
    await expect(StreamSipClient.tls({ port: r.tlsPort!, ca: pki.ca.certPem })).rejects.toThrow(
      /certificate/,
    );
  });

  it('answers OPTIONS with 200 and a CRLFCRLF ping with a CRLF pong (RFC 5626)', async () => {
    const k = await tlsEdge();
    const c = await tlsClient(k);
    expect((await options(c, k)).status).toBe(200);
    c.send('\r\n\r\n');
    for (let i = 0; i < 50 && c.pongs === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(c.pongs).toBe(1);
    expect(k.requests('OPTIONS')[0]).toMatchObject({ transport: 'tls' });
  });

  it('relays an INVITE over UDP to a SIPp UAS; the 200 comes back over TLS, and ACK and BYE follow the record-route', async () => {
    const far = await farEnds.start('uas-200-record-route-wait-bye.xml', { timeoutSec: 15 });
    const k = await tlsEdge({ forwardTo: { host: '127.0.0.1', port: far.port } });
    const c = await tlsClient(k);
    const callId = token('inv-');
    const fromTag = token();
    const sdp =
      'v=0\r\no=gw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';
    const common = (cseq: string) => `Max-Forwards: 70
From: <sip:gw@localhost>;tag=${fromTag}
Call-ID: ${callId}
CSeq: ${cseq}
Contact: <sip:gw@127.0.0.1:${c.localPort};transport=tls>`;
    c.send(`INVITE sip:12125550100@127.0.0.1:${k.tlsPort};transport=tls SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
To: <sip:12125550100@localhost>
${common('1 INVITE')}
Content-Type: application/sdp
Content-Length: ${Buffer.byteLength(sdp)}

${sdp}`);
    const ok = await c.waitFor((m) => m.status === 200 && m.method === 'INVITE', 10_000);
    expect(ok.body).toContain('m=audio');
    const target = /<([^>]+)>/.exec(ok.headers.get('contact')![0]!)![1]!;
    const to = ok.headers.get('to')![0]!;
    const routes = routeSet(ok);
    expect(routes).toHaveLength(2); // double record-route: TLS side and UDP side
    expect(routes[0]).toContain(`:${k.tlsPort};transport=tls`);
    const inDialog = (method: string, cseq: string) => `${method} ${target} SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
${routes.map((r) => `Route: ${r}`).join('\n')}
To: ${to}
${common(cseq)}
Content-Length: 0

`;
    c.send(inDialog('ACK', '1 ACK'));
    c.send(inDialog('BYE', '2 BYE'));
    const byeOk = await c.waitFor((m) => m.status === 200 && m.method === 'BYE', 10_000);
    expect(byeOk.status).toBe(200);
    const done = await far.done;
    expect(done.code, done.errors).toBe(0);
    expect(k.requests().map((r) => [r.method, r.transport])).toEqual([
      ['INVITE', 'tls'],
      ['ACK', 'tls'],
      ['BYE', 'tls'],
    ]);
  });

  it("sends the far end's BYE back over the TLS client's own connection (contact alias), without a route set", async () => {
    const far = await farEnds.start('uas-200-bye-from-far-end.xml', { timeoutSec: 15 });
    const k = await tlsEdge({ forwardTo: { host: '127.0.0.1', port: far.port } });
    const c = await tlsClient(k);
    const callId = token('inv-');
    const fromTag = token();
    c.send(`INVITE sip:12125550101@127.0.0.1:${k.tlsPort};transport=tls SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
Max-Forwards: 70
From: <sip:gw@localhost>;tag=${fromTag}
To: <sip:12125550101@localhost>
Call-ID: ${callId}
CSeq: 1 INVITE
Contact: <sip:gw@127.0.0.1:5061;transport=tls>
Content-Length: 0

`);
    const ok = await c.waitFor((m) => m.status === 200 && m.method === 'INVITE', 10_000);
    const target = /<([^>]+)>/.exec(ok.headers.get('contact')![0]!)![1]!;
    // uas-200-bye-from-far-end.xml keeps no Record-Route: no Route headers here either
    c.send(`ACK ${target} SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
Max-Forwards: 70
From: <sip:gw@localhost>;tag=${fromTag}
To: ${ok.headers.get('to')![0]}
Call-ID: ${callId}
CSeq: 1 ACK
Content-Length: 0

`);
    // Contact says port 5061, where nothing listens: the BYE arrives over this
    // connection only thanks to the ;alias Kamailio added (and handle_ruri_alias removed)
    const bye = await c.waitFor((m) => m.method === 'BYE' && m.status === undefined, 10_000);
    expect(bye.startLine).toBe('BYE sip:gw@127.0.0.1:5061;transport=tls SIP/2.0');
    const h = (n: string) =>
      bye.headers
        .get(n)!
        .map((v) => `${n}: ${v}`)
        .join('\n');
    c.send(`SIP/2.0 200 OK
${h('via')}
${h('from')}
${h('to')}
${h('call-id')}
${h('cseq')}
Content-Length: 0

`);
    const done = await far.done;
    expect(done.code, done.errors).toBe(0);
  });

  it('with mutual TLS, accepts a client certificate from the CA and refuses a client without one', async () => {
    const m = await kamailio({
      tls: {
        certPath: pki.server.certPath,
        keyPath: pki.server.keyPath,
        clientCaPath: pki.ca.certPath,
      },
    });
    const withCert = await tlsClient(m, { cert: pki.client.certPem, key: pki.client.keyPem });
    expect((await options(withCert, m)).status).toBe(200);

    // TLS 1.3: the server's refusal arrives after the client's handshake is done
    let refused: StreamSipClient | undefined;
    try {
      refused = await tlsClient(m);
      await options(refused, m);
      throw new Error('an OPTIONS without a client certificate was answered');
    } catch (e) {
      expect(String(e)).toMatch(/certificate|closed|EOF|ECONNRESET/i);
    }
    expect(m.requests('OPTIONS')).toHaveLength(1);
  });
});
