// SIP over TLS to a real TLS edge (issue 26 item 1): the daemon dials a
// trunk on Kamailio's TLS listener, Kamailio relays over UDP to a SIPp far
// end. The trunk's certificate comes from a test CA made at run time; the
// trunk names that CA in tls.caPem. Without it (the system's CAs only) the
// handshake fails and the record says why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { startKamailio, type Kamailio } from './support/kamailio.js';
import { createTestPki, type TestPki } from './support/test-pki.js';

const farEnds = new FarEnds();
let pki: TestPki;
let gw: Gateway;
let kamailio: Kamailio;
let sippPort: number;
let sipp: Awaited<ReturnType<FarEnds['start']>>;

beforeAll(async () => {
  pki = await createTestPki();
  sipp = await farEnds.start('uas-200-record-route-wait-bye.xml', { timeoutSec: 25 });
  sippPort = sipp.port;
  kamailio = await startKamailio({
    tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath },
    forwardTo: { host: '127.0.0.1', port: sippPort },
  });
  // The daemon's own certificate for in-dialog requests Kamailio sends back over TLS.
  gw = await startGateway({
    GATEWAY_SIP_HOST: '127.0.0.1',
    GATEWAY_SIP_TLS_PORT: '0',
    GATEWAY_SIP_TLS_CERT_FILE: pki.server.certPath,
    GATEWAY_SIP_TLS_KEY_FILE: pki.server.keyPath,
  });
}, 60_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
  await kamailio?.stop();
  await pki?.cleanup();
});

const tlsTrunk = (tls: Record<string, unknown>) =>
  gw.trunk(kamailio.tlsPort!, { host: 'localhost', transport: 'tls', tls });

describe('SIP over TLS through a Kamailio TLS edge', () => {
  it('gateway-to-tls-edge: the call is answered over TLS, reaches the SIPp far end over UDP, and our BYE ends it', async () => {
    const trunk = await tlsTrunk({ caPem: pki.ca.certPem });
    const view = await gw.api('GET', `/api/v1/phones/sip-trunks/${trunk}`);
    expect(view.json.tls).toEqual({
      caPem: pki.ca.certPem,
      clientCertPem: null,
      sipsUri: false,
      hasClientKey: false,
    });
    const callId = await gw.call(trunk, '+12125556500');
    await gw.waitFor(callId, 'in_call', 15_000);
    expect((await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`)).status).toBe(200);
    const r = await gw.waitFor(callId, undefined, 15_000);
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    const done = await sipp.done;
    expect(done.code, done.errors).toBe(0);
    // What Kamailio received came over TLS: the INVITE, and (it record-routes) the ACK and our BYE.
    const overTls = kamailio
      .requests()
      .filter((q) => q.transport === 'tls')
      .map((q) => q.method);
    expect(overTls).toEqual(expect.arrayContaining(['INVITE', 'ACK', 'BYE']));
    const invite = kamailio.requests('INVITE')[0]!;
    expect(invite.requestUri).toMatch(/^sip:\+12125556500@localhost:\d+;transport=tls$/);
    expect(invite.contact).toMatch(/;transport=tls>/);
  }, 40_000);

  it('gateway-to-tls-edge with a certificate from a CA the trunk does not trust: refused, no_voip_connection with the TLS error', async () => {
    const invitesBefore = kamailio.requests('INVITE').length;
    // No caPem: the system's CAs, which do not know the run-time test CA.
    const trunk = await tlsTrunk({});
    const callId = await gw.call(trunk, '+12125556501');
    const r = await gw.waitFor(callId, undefined, 15_000);
    expect(r).toMatchObject({
      status: 'failed',
      endCallReason: 'no_voip_connection',
      sipFailure: {
        code: 503,
        transportError: expect.stringMatching(/^tls: certificate not trusted \(/),
      },
    });
    expect(kamailio.requests('INVITE').length).toBe(invitesBefore);
  }, 30_000);

  it('a trunk whose CA bundle does not load is refused by the API with invalid_tls_material', async () => {
    const res = await gw.api('POST', '/api/v1/phones/sip-trunks', {
      name: 'bad-ca',
      host: 'localhost',
      transport: 'tls',
      tls: { caPem: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('invalid_tls_material');
  });
});

describe('mutual TLS with a TLS edge that requires a client certificate', () => {
  let strict: Kamailio;
  beforeAll(async () => {
    strict = await startKamailio({
      tls: {
        certPath: pki.server.certPath,
        keyPath: pki.server.keyPath,
        clientCaPath: pki.ca.certPath,
        requireClientCertificate: true,
      },
      forwardTo: { host: '127.0.0.1', port: 9 },
    });
  }, 30_000);
  afterAll(async () => {
    await strict?.stop();
  });

  it('gateway-to-mtls-edge without a client certificate: refused, no_voip_connection with the TLS error', async () => {
    const trunk = await gw.trunk(strict.tlsPort!, {
      host: 'localhost',
      transport: 'tls',
      tls: { caPem: pki.ca.certPem },
    });
    const r = await gw.waitFor(await gw.call(trunk, '+12125556510'), undefined, 15_000);
    expect(r).toMatchObject({
      status: 'failed',
      endCallReason: 'no_voip_connection',
      sipFailure: { transportError: expect.stringMatching(/^tls: /) },
    });
    expect(strict.requests('INVITE')).toHaveLength(0);
  }, 30_000);

  it("gateway-to-mtls-edge with the trunk's client certificate: the INVITE gets through", async () => {
    const trunk = await gw.trunk(strict.tlsPort!, {
      host: 'localhost',
      transport: 'tls',
      tls: {
        caPem: pki.ca.certPem,
        clientCertPem: pki.client.certPem,
        clientKeyPem: pki.client.keyPem,
      },
    });
    const view = await gw.api('GET', `/api/v1/phones/sip-trunks/${trunk}`);
    expect(view.json.tls.hasClientKey).toBe(true);
    expect(JSON.stringify(view.json)).not.toContain('PRIVATE KEY');
    const callId = await gw.call(trunk, '+12125556511');
    await strict.waitForRequest((q) => q.method === 'INVITE' && q.transport === 'tls', 10_000);
    await gw.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
    await gw.waitFor(callId, undefined, 15_000);
  }, 30_000);
});
