// The Kamailio test peer as a registrar and carrier proxy, driven without
// the gateway: SIPp registers with digest auth (granted expiry, Expires: 0,
// expiry, a wrong password), a TLS client registers and gets its calls over
// its connection, and calls are relayed from a registered user (403 when
// not registered, 407 when asked) or toward a registered one.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSipp, type SippProcess, type SippResult } from '../runner/sipp-runner.js';
import { FarEnds } from '../support/far-end.js';
import { startKamailio, type Kamailio, type KamailioOptions } from '../support/kamailio.js';
import { digestAuthorization, StreamSipClient, token } from '../support/stream-sip-client.js';
import { createTestPki, type TestPki } from '../support/test-pki.js';

let pki: TestPki;
const farEnds = new FarEnds();
const peers: Kamailio[] = [];
const uacs: SippProcess[] = [];
const clients: StreamSipClient[] = [];

beforeAll(async () => {
  pki = await createTestPki();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const u of uacs.splice(0)) u.kill();
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

/** A SIPp UAC run against Kamailio's UDP port. */
async function uac(k: Kamailio, scenario: string, args: string[]): Promise<SippResult> {
  const sipp = await startSipp({
    scenario,
    remote: `127.0.0.1:${k.udpPort}`,
    timeoutSec: 10,
    extraArgs: args,
  });
  uacs.push(sipp);
  return sipp.done;
}

const register = (k: Kamailio, user: string, password: string, contact: string, expires: number) =>
  uac(k, 'uac-register-digest-200.xml', [
    '-s',
    user,
    '-au',
    user,
    '-ap',
    password,
    '-key',
    'contact',
    contact,
    '-key',
    'expires',
    String(expires),
  ]);

describe('Kamailio as a registrar', () => {
  it('challenges REGISTER (401), grants no more than max_expires, lists the binding, and Expires: 0 removes it', async () => {
    const k = await kamailio({
      users: [{ username: 'alice', password: 'secret' }],
      minExpires: 5,
      maxExpires: 10,
    });
    const contact = 'sip:alice@127.0.0.1:5099';
    const reg = await register(k, 'alice', 'secret', contact, 3600);
    expect(reg.code, reg.errors).toBe(0);
    expect(reg.messages).toMatch(
      /SIP\/2\.0 401[\s\S]*WWW-Authenticate: Digest realm="kamailio\.test"/,
    );
    expect(reg.messages).toMatch(
      /SIP\/2\.0 200[\s\S]*Contact: <sip:alice@127\.0\.0\.1:5099>;expires=10/,
    );
    const [binding, ...others] = await k.locations('alice');
    expect(others).toEqual([]);
    expect(binding).toMatchObject({ aor: 'alice', contact, callId: expect.any(String) });
    expect(binding!.expires).toBeGreaterThan(0);
    expect(binding!.expires).toBeLessThanOrEqual(10);
    expect(k.registerCount('alice')).toBe(2); // challenged, then authorised
    expect(k.requests('REGISTER').map((r) => [r.authUser, r.expires])).toEqual([
      [undefined, 3600],
      ['alice', 3600],
    ]);

    const unreg = await register(k, 'alice', 'secret', contact, 0);
    expect(unreg.code, unreg.errors).toBe(0);
    expect(await k.locations()).toEqual([]);
    expect(k.registerCount()).toBe(4);
  });

  it('drops a binding that is not refreshed once its granted time is up', async () => {
    const k = await kamailio({
      users: [{ username: 'alice', password: 'secret' }],
      minExpires: 1,
      maxExpires: 2,
    });
    const reg = await register(k, 'alice', 'secret', 'sip:alice@127.0.0.1:5099', 3600);
    expect(reg.code, reg.errors).toBe(0);
    expect(await k.locations('alice')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 3500));
    expect(await k.locations('alice')).toEqual([]);
  });

  it('binds a client registered over TLS to its connection: an INVITE for it arrives over that connection', async () => {
    const k = await kamailio({
      users: [{ username: 'gw', password: 'pw' }],
      tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath },
    });
    const c = await tlsClient(k);
    const uri = `sip:127.0.0.1:${k.tlsPort};transport=tls`;
    const callId = token('reg-');
    const request = (cseq: number, auth = '') => `REGISTER ${uri} SIP/2.0
Via: SIP/2.0/TLS 127.0.0.1:${c.localPort};branch=z9hG4bK${token()};rport
Max-Forwards: 70
From: <sip:gw@127.0.0.1>;tag=${token()}
To: <sip:gw@127.0.0.1>
Call-ID: ${callId}
CSeq: ${cseq} REGISTER
Contact: <sip:gw@127.0.0.1:5061;transport=tls>
Expires: 60
${auth}Content-Length: 0

`;
    c.send(request(1));
    const challenge = await c.waitFor((m) => m.status === 401);
    const www = challenge.headers.get('www-authenticate')![0]!;
    c.send(request(2, `Authorization: ${digestAuthorization(www, 'REGISTER', uri, 'gw', 'pw')}\n`));
    expect((await c.waitFor((m) => m.status === 200 && m.method === 'REGISTER')).status).toBe(200);
    const [binding] = await k.locations('gw');
    expect(binding).toMatchObject({
      contact: 'sip:gw@127.0.0.1:5061;transport=tls',
      received: `sip:127.0.0.1:${c.localPort};transport=tls`,
      socket: `tls:127.0.0.1:${k.tlsPort}`,
    });

    const call = uac(k, 'uac-invite-to-user-480.xml', ['-s', 'gw']);
    const invite = await c.waitFor((m) => m.method === 'INVITE' && m.status === undefined, 10_000);
    expect(invite.startLine).toBe('INVITE sip:gw@127.0.0.1:5061;transport=tls SIP/2.0');
    const h = (n: string) =>
      invite.headers
        .get(n)!
        .map((v) => `${n}: ${v}`)
        .join('\n');
    c.send(`SIP/2.0 480 Temporarily Unavailable
${h('via')}
${h('from')}
${h('to')};tag=${token()}
${h('call-id')}
${h('cseq')}
Content-Length: 0

`);
    const done = await call;
    expect(done.code, done.errors).toBe(0);
  });

  it('refuses a wrong password: challenged again, no binding', async () => {
    const k = await kamailio({ users: [{ username: 'alice', password: 'secret' }] });
    const reg = await register(k, 'alice', 'wrong', 'sip:alice@127.0.0.1:5099', 60);
    expect(reg.code).not.toBe(0);
    expect(await k.locations()).toEqual([]);
  });

  it('sends an INVITE for a subscriber to its binding, and answers 480 itself when there is none', async () => {
    const k = await kamailio({ users: [{ username: 'bob', password: 'pw' }] });
    const alone = await uac(k, 'uac-invite-to-user-480.xml', ['-s', 'bob']);
    expect(alone.code, alone.errors).toBe(0);
    expect(alone.messages).not.toMatch(/Reason: Q\.850/);

    const ua = await farEnds.start('uas-480-unavailable.xml', { timeoutSec: 15 });
    const reg = await register(k, 'bob', 'pw', `sip:bob@127.0.0.1:${ua.port}`, 60);
    expect(reg.code, reg.errors).toBe(0);
    const call = await uac(k, 'uac-invite-to-user-480.xml', ['-s', 'bob']);
    expect(call.code, call.errors).toBe(0);
    expect(call.messages).toMatch(/SIP\/2\.0 480[^]*Reason: Q\.850;cause=18/);
    expect((await ua.done).code).toBe(0);
  });

  it('relays a call from a registered user to the far end, and refuses (403) one whose From user has no binding', async () => {
    const far = await farEnds.start('uas-180-200.xml', { timeoutSec: 20 });
    const k = await kamailio({
      users: [{ username: 'sipp', password: 'pw' }],
      forwardTo: { host: '127.0.0.1', port: far.port },
      requireRegistration: true,
    });
    const refused = await uac(k, 'uac-invite-200-bye.xml', ['-s', '12125550100', '-d', '200']);
    expect(refused.code).not.toBe(0);
    expect(refused.messages).toMatch(/SIP\/2\.0 403 Not Registered/);

    const reg = await register(k, 'sipp', 'pw', 'sip:sipp@127.0.0.1:5098', 60);
    expect(reg.code, reg.errors).toBe(0);
    const call = await uac(k, 'uac-invite-200-bye.xml', ['-s', '12125550100', '-d', '200']);
    expect(call.code, call.errors).toBe(0);
    const done = await far.done;
    expect(done.code, done.errors).toBe(0);
    expect(k.requests('BYE')).toHaveLength(1);
  });

  it('challenges an INVITE with 407 when asked to, and relays it once authorised', async () => {
    const far = await farEnds.start('uas-180-200.xml', { timeoutSec: 20 });
    const k = await kamailio({
      users: [{ username: 'sipp', password: 'pw' }],
      forwardTo: { host: '127.0.0.1', port: far.port },
      authenticateInvites: true,
    });
    const call = await uac(k, 'uac-invite-407-digest-200-bye.xml', [
      '-s',
      '12125550100',
      '-au',
      'sipp',
      '-ap',
      'pw',
      '-d',
      '200',
    ]);
    expect(call.code, call.errors).toBe(0);
    expect(call.messages).toMatch(/SIP\/2\.0 407[^]*Proxy-Authenticate: Digest/);
    expect((await far.done).code).toBe(0);
    expect(k.requests('INVITE').map((r) => r.authUser)).toEqual([undefined, 'sipp']);
  });
});
