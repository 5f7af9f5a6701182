// The registration client's state machine on a fake clock, against a
// scripted registrar: digest, the granted expiry and its refresh, 423,
// back-off and Retry-After, removal on stop, and which Contact is ours.
import { describe, expect, it } from 'vitest';
import { getHeader, parseMessage, serializeMessage } from '../message/index.js';
import type { SipRequest, SipResponse } from '../message/types.js';
import { createResponse } from '../transaction/create-response.js';
import type { TransactionLayer } from '../transaction/transaction-layer.js';
import type { ClientTransactionUser } from '../transaction/transaction-types.js';
import { FakeClock } from '../transport/fake-clock.js';
import { createDigestAuthorizer } from './authorizer.js';
import {
  FLOW_RECOVERY_MS,
  grantedSeconds,
  refreshDelayMs,
  Registrations,
  type RegistrationBinding,
} from './registrations.js';

const SENT_BY = '192.0.2.10:5060';
const BINDING: RegistrationBinding = {
  id: 'trunk-1',
  target: { host: '198.51.100.7', transport: 'udp' },
  domain: 'sip.carrier.example',
  username: 'acct1',
  authUsername: 'acct1',
  password: 'pw',
  expiresSeconds: 3600,
};

type Reply = (req: SipRequest) => SipResponse | 'timeout';

function harness(reply: Reply) {
  const clock = new FakeClock();
  const sent: SipRequest[] = [];
  const tx = {
    sendRequest(req: SipRequest, _branch: string, _dest: unknown, tu: ClientTransactionUser) {
      sent.push(req);
      // Answer on the next turn, as a network would.
      queueMicrotask(() => {
        const res = reply(req);
        if (res === 'timeout') tu.onTimeout();
        else tu.onResponse(res);
      });
      return undefined;
    },
  } as unknown as TransactionLayer;
  const regs = new Registrations({
    tx,
    clock,
    resolve: async (t) => [{ transport: t.transport, host: t.host, port: t.port ?? 5060 }],
    sentBy: () => SENT_BY,
    createAuthorizer: (c) => createDigestAuthorizer(c),
    userAgent: 'test',
    authAttemptLimit: 2,
    retryMinMs: 1000,
    retryMaxMs: 8000,
  });
  const flush = () => new Promise((r) => setTimeout(r, 0));
  return { clock, sent, regs, flush };
}

const respond = (
  req: SipRequest,
  status: number,
  reason: string,
  headers: Array<[string, string]> = [],
) =>
  parseMessage(
    // Through the wire format, so the response is what the stack would parse.
    serializeMessage(createResponse(req, status, reason, { toTag: 'r1', headers })),
  ) as SipResponse;

const CHALLENGE: [string, string] = [
  'www-authenticate',
  'Digest realm="carrier", nonce="n1", qop="auth", algorithm=MD5',
];

/** A registrar that challenges unauthenticated REGISTERs and grants `grant` seconds. */
const registrar =
  (grant: number): Reply =>
  (req) =>
    getHeader(req, 'authorization')
      ? respond(req, 200, 'OK', [
          ['contact', `<sip:other@203.0.113.9:5060>;expires=999`],
          ['contact', `<sip:acct1@${SENT_BY}>;expires=${grant}`],
        ])
      : respond(req, 401, 'Unauthorized', [CHALLENGE]);

describe('Registrations', () => {
  it('registers with digest, takes the granted expiry from our Contact, refreshes before it on one Call-ID', async () => {
    const h = harness(registrar(60));
    h.regs.setBindings([BINDING]);
    await h.flush();
    expect(h.sent.map((r) => getHeader(r, 'authorization') !== undefined)).toEqual([false, true]);
    const first = h.sent[0]!;
    expect(first.uri).toBe('sip:sip.carrier.example');
    expect(getHeader(first, 'to')).toBe('<sip:acct1@sip.carrier.example>');
    expect(getHeader(first, 'contact')).toBe(`<sip:acct1@${SENT_BY}>`);
    expect(getHeader(first, 'expires')).toBe('3600');
    expect(h.regs.snapshot('trunk-1')).toMatchObject({
      state: 'registered',
      lastStatus: 200,
      expiresAt: 60_000,
      refreshes: 0,
    });
    // Granted 60 s: refreshed 30 s before, not earlier.
    h.clock.advance(29_999);
    await h.flush();
    expect(h.sent).toHaveLength(2);
    h.clock.advance(1);
    await h.flush();
    expect(h.sent).toHaveLength(4);
    expect(new Set(h.sent.map((r) => getHeader(r, 'call-id'))).size).toBe(1);
    expect(h.sent.map((r) => getHeader(r, 'cseq'))).toEqual([
      '1 REGISTER',
      '2 REGISTER',
      '3 REGISTER',
      '4 REGISTER',
    ]);
    expect(h.regs.snapshot('trunk-1')?.refreshes).toBe(1);
  });

  it('a refused registration is unregistered with the status and retried with back-off, doubling up to the max', async () => {
    const h = harness((req) => respond(req, 403, 'Forbidden'));
    h.regs.setBindings([BINDING]);
    await h.flush();
    expect(h.regs.snapshot('trunk-1')).toMatchObject({
      state: 'unregistered',
      lastStatus: 403,
      lastError: '403 Forbidden',
    });
    const at: number[] = [];
    for (let t = 0; t < 30_000; t += 500) {
      const before = h.sent.length;
      h.clock.advance(500);
      await h.flush();
      if (h.sent.length > before) at.push(h.clock.now());
    }
    // 1 s, then 2, 4, 8, 8 … after each failure.
    expect(at.slice(0, 5)).toEqual([1000, 3000, 7000, 15_000, 23_000]);
  });

  it("a registrar's Retry-After wins over the back-off", async () => {
    const h = harness((req) => respond(req, 503, 'Service Unavailable', [['retry-after', '20']]));
    h.regs.setBindings([BINDING]);
    await h.flush();
    h.clock.advance(19_999);
    await h.flush();
    expect(h.sent).toHaveLength(1);
    h.clock.advance(1);
    await h.flush();
    expect(h.sent).toHaveLength(2);
  });

  it('423 Interval Too Brief: asked again with its Min-Expires', async () => {
    const h = harness((req) =>
      Number(getHeader(req, 'expires')) < 7200
        ? respond(req, 423, 'Interval Too Brief', [['min-expires', '7200']])
        : respond(req, 200, 'OK', [['expires', '7200']]),
    );
    h.regs.setBindings([BINDING]);
    await h.flush();
    expect(h.sent.map((r) => getHeader(r, 'expires'))).toEqual(['3600', '7200']);
    expect(h.regs.snapshot('trunk-1')).toMatchObject({ state: 'registered', expiresAt: 7_200_000 });
  });

  it('no answer: unregistered with 408', async () => {
    const h = harness(() => 'timeout');
    h.regs.setBindings([BINDING]);
    await h.flush();
    expect(h.regs.snapshot('trunk-1')).toMatchObject({ state: 'unregistered', lastStatus: 408 });
  });

  it('stop() removes a registered binding with Expires: 0, answering the challenge again', async () => {
    const h = harness(registrar(60));
    h.regs.setBindings([BINDING]);
    await h.flush();
    await h.regs.stop();
    const last = h.sent.slice(-2);
    expect(last.map((r) => getHeader(r, 'expires'))).toEqual(['0', '0']);
    expect(getHeader(last[1]!, 'authorization')).toMatch(/^Digest username="acct1"/);
    expect(h.regs.snapshot('trunk-1')).toBeUndefined();
  });

  it('a binding removed from the set is un-registered; an unchanged set costs nothing', async () => {
    const h = harness(registrar(60));
    h.regs.setBindings([BINDING]);
    await h.flush();
    h.regs.setBindings([{ ...BINDING }]);
    await h.flush();
    expect(h.sent).toHaveLength(2);
    h.regs.setBindings([]);
    await h.flush();
    expect(h.sent.slice(2).map((r) => getHeader(r, 'expires'))).toEqual(['0', '0']);
  });
});

describe('registration helpers', () => {
  it('refreshDelayMs: half the grant at most 30 s early', () => {
    expect(refreshDelayMs(6)).toBe(3000);
    expect(refreshDelayMs(60)).toBe(30_000);
    expect(refreshDelayMs(3600)).toBe(3_570_000);
    expect(refreshDelayMs(1)).toBe(1000);
  });

  it('grantedSeconds: our Contact among several, else Expires, else undefined', () => {
    const base = {
      kind: 'response',
      status: 200,
      reason: 'OK',
      version: 'SIP/2.0',
      body: Buffer.alloc(0),
    } as const;
    const res = (headers: Array<[string, string]>): SipResponse => ({
      ...base,
      headers: headers.map(([name, value]) => ({ name, value })),
    });
    expect(
      grantedSeconds(
        res([
          ['contact', '<sip:acct1@203.0.113.9:5060>;expires=900'],
          ['contact', `<sip:acct1@${SENT_BY}>;expires=120`],
          ['expires', '3600'],
        ]),
        'acct1',
        SENT_BY,
      ),
    ).toBe(120);
    expect(grantedSeconds(res([['expires', '300']]), 'acct1', SENT_BY)).toBe(300);
    expect(grantedSeconds(res([]), 'acct1', SENT_BY)).toBeUndefined();
  });
});

describe('Registrations: flow recovery', () => {
  const overTls: RegistrationBinding = {
    ...BINDING,
    target: { host: '198.51.100.7', port: 5061, transport: 'tls' },
  };

  it('a TLS flow to the registrar that closes is registered again after FLOW_RECOVERY_MS, not at the refresh', async () => {
    const h = harness(registrar(3600));
    h.regs.setBindings([overTls]);
    await h.flush();
    expect(h.sent).toHaveLength(2);
    // Another peer's flow closing changes nothing.
    h.regs.flowClosed({ transport: 'tls', host: '203.0.113.1', port: 5061 });
    h.regs.flowClosed({ transport: 'tls', host: '198.51.100.7', port: 5061 });
    h.clock.advance(FLOW_RECOVERY_MS - 1);
    await h.flush();
    expect(h.sent).toHaveLength(2);
    h.clock.advance(1);
    await h.flush();
    expect(h.sent).toHaveLength(4);
    expect(h.regs.snapshot('trunk-1')).toMatchObject({ state: 'registered', refreshes: 1 });
  });

  it('a UDP binding has no flow to lose', async () => {
    const h = harness(registrar(3600));
    h.regs.setBindings([BINDING]);
    await h.flush();
    h.regs.flowClosed({ transport: 'udp', host: '198.51.100.7', port: 5060 });
    h.clock.advance(60_000);
    await h.flush();
    expect(h.sent).toHaveLength(2);
  });
});
