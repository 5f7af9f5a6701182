// Registration trunks against Kamailio's registrar (issue 26 item 3). The
// registrar challenges every REGISTER (digest) and grants at most 6 s, so the
// binding is refreshed every 3 s; the carrier proxy in front of the SIPp far
// end refuses INVITEs from an unregistered user and challenges the rest.
// SIGTERM un-REGISTERs: Kamailio's location table is empty afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSipp } from './runner/sipp-runner.js';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { startKamailio, type Kamailio } from './support/kamailio.js';
import { createTestPki, type TestPki } from './support/test-pki.js';

const USER = { username: 'gw-trunk-1', password: 'r3g-s3cret' };
const farEnds = new FarEnds();
let gw: Gateway | undefined;
let kamailio: Kamailio;
let sipp: Awaited<ReturnType<FarEnds['start']>>;

beforeAll(async () => {
  sipp = await farEnds.start('uas-200-record-route-wait-bye.xml', { timeoutSec: 40 });
  kamailio = await startKamailio({
    forwardTo: { host: '127.0.0.1', port: sipp.port },
    users: [USER],
    minExpires: 2,
    maxExpires: 6,
    authenticateInvites: true,
    requireRegistration: true,
  });
  gw = await startGateway({ GATEWAY_SIP_REGISTER_RETRY_MIN_SECONDS: '1' });
}, 60_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
  await kamailio?.stop();
});

const until = async <T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 20_000,
): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('a registration trunk against Kamailio’s registrar', () => {
  let trunk: string;

  it('gateway-to-registrar: registers with digest, is refreshed before the granted 6 s run out, and shows it in health', async () => {
    trunk = await gw!.trunk(kamailio.udpPort, {
      register: {
        enabled: true,
        username: USER.username,
        password: USER.password,
        expiresSeconds: 3600,
      },
      // The carrier knows its subscriber by the From user; the caller ID goes in P-Asserted-Identity.
      identity: {
        fromUser: 'username',
        fixedFromUser: null,
        displayName: null,
        assertedIdentity: 'pai',
        diversion: false,
      },
    });
    const view = await gw!.api('GET', `/api/v1/phones/sip-trunks/${trunk}`);
    expect(view.json.register).toEqual({
      enabled: true,
      username: USER.username,
      authUsername: null,
      expiresSeconds: 3600,
      registrar: null,
      hasPassword: true,
    });
    const refreshed = await until('two refreshes', async () => {
      const h = (await gw!.api('GET', `/api/v1/phones/sip-trunks/${trunk}`)).json.health;
      return h.registration?.refreshes >= 2 ? h : undefined;
    });
    expect(refreshed.registration).toMatchObject({
      state: 'registered',
      lastStatus: 200,
      lastError: null,
    });
    // The registrar granted 6 s of the 3600 asked for.
    const left =
      Date.parse(refreshed.registration.expiresAt) -
      Date.parse(refreshed.registration.registeredAt);
    expect(left).toBe(6000);
    const bindings = await kamailio.locations();
    expect(bindings.map((b) => b.aor)).toContain(USER.username);
    // Each REGISTER was challenged once: an unauthenticated one, then one with our digest.
    const registers = kamailio.requests('REGISTER').filter((r) => r.toUser === USER.username);
    expect(registers.length).toBeGreaterThanOrEqual(6);
    expect(registers.filter((r) => r.authUser === USER.username).length).toBeGreaterThanOrEqual(3);
    expect(new Set(registers.map((r) => r.callId)).size).toBe(1);
  }, 40_000);

  it('gateway-to-carrier-proxy: a call through the registered trunk reaches the SIPp far end, digest-challenged by the proxy', async () => {
    const callId = await gw!.call(trunk, '+12125556600');
    await gw!.waitFor(callId, 'in_call', 15_000);
    expect((await gw!.api('POST', `/api/v1/phones/calls/${callId}/hangup`)).status).toBe(200);
    const r = await gw!.waitFor(callId, undefined, 15_000);
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
    const invites = kamailio.requests('INVITE').filter((q) => q.toUser === '+12125556600');
    expect(invites.map((q) => q.authUser)).toEqual([undefined, USER.username]);
    expect(invites.map((q) => q.fromUser)).toEqual([USER.username, USER.username]);
  }, 40_000);

  it('registrar-to-gateway: an INVITE the registrar routes to our binding is answered 480', async () => {
    const caller = await startSipp({
      scenario: 'uac-invite-to-user-480.xml',
      remote: `127.0.0.1:${kamailio.udpPort}`,
      extraArgs: ['-s', USER.username],
      timeoutSec: 15,
    });
    const done = await caller.done;
    expect(done.code, done.errors).toBe(0);
  }, 30_000);

  it('a trunk whose registration is refused (wrong password) is unregistered with the status, and its calls are refused sip_trunk_offline', async () => {
    const bad = await gw!.trunk(kamailio.udpPort, {
      name: 'wrong-password',
      register: { enabled: true, username: USER.username, password: 'wrong' },
    });
    const h = await until('registration failure', async () => {
      const health = (await gw!.api('GET', `/api/v1/phones/sip-trunks/${bad}`)).json.health;
      return health.registration?.state === 'unregistered' ? health : undefined;
    });
    expect(h.registration).toMatchObject({ lastStatus: 401, state: 'unregistered' });
    const res = await gw!.api('POST', '/api/v1/phones/calls/initiate-call', {
      destinationNumber: '+12125556601',
      agentId: gw!.agentId,
      sipTrunkId: bad,
      useAntiHarassmentProtection: false,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('sip_trunk_offline');
    expect(res.json.reason ?? res.json.message).toMatch(/not registered with its registrar: 401/);
    // Back-off: the failed binding is retried, but not in a tight loop.
    await new Promise((r) => setTimeout(r, 3000));
    const wrong = kamailio.requests('REGISTER').filter((r) => r.authUser === USER.username);
    expect(wrong.length).toBeLessThan(40);
    await gw!.api('DELETE', `/api/v1/phones/sip-trunks/${bad}`);
  }, 40_000);

  it('SIGTERM un-REGISTERs: the location table is empty afterwards', async () => {
    expect((await kamailio.locations()).length).toBeGreaterThan(0);
    const code = await gw!.stop();
    gw = undefined;
    expect(code).toBe(0);
    const zero = kamailio.requests('REGISTER').filter((r) => r.expires === 0);
    expect(zero.length).toBeGreaterThanOrEqual(1);
    expect(await kamailio.locations()).toEqual([]);
  }, 30_000);
});

describe('a registration trunk over TLS', () => {
  let pki: TestPki;
  let edge: Kamailio;
  let tlsGw: Gateway;
  beforeAll(async () => {
    pki = await createTestPki();
    edge = await startKamailio({
      tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath },
      users: [USER],
      minExpires: 2,
      maxExpires: 3600,
    });
    tlsGw = await startGateway();
  }, 60_000);
  afterAll(async () => {
    await tlsGw?.stop();
    await edge?.stop();
    await pki?.cleanup();
  });

  it('gateway-to-registrar over TLS: REGISTERs on the verified connection, and the registrar reaches us back on it (480)', async () => {
    const trunk = await tlsGw.trunk(edge.tlsPort!, {
      host: 'localhost',
      transport: 'tls',
      tls: { caPem: pki.ca.certPem },
      register: { enabled: true, username: USER.username, password: USER.password },
    });
    await until('registered over TLS', async () => {
      const h = (await tlsGw.api('GET', `/api/v1/phones/sip-trunks/${trunk}`)).json.health;
      return h.registration?.state === 'registered' ? h : undefined;
    });
    const binding = (await edge.locations(USER.username))[0]!;
    expect(binding.socket).toMatch(/^tls:/);
    expect(binding.contact).toMatch(/;transport=tls$/);
    // An inbound call to our binding comes back over our TLS connection: answered 480.
    const caller = await startSipp({
      scenario: 'uac-invite-to-user-480.xml',
      remote: `127.0.0.1:${edge.udpPort}`,
      extraArgs: ['-s', USER.username],
      timeoutSec: 15,
    });
    const done = await caller.done;
    expect(done.code, done.errors).toBe(0);
    expect(edge.requests('REGISTER').every((r) => r.transport === 'tls')).toBe(true);
  }, 40_000);
});
