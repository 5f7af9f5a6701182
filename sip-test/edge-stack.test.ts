// Issue 23 at the stack: strangers (sources on 127.0.0.2+, the trunk on
// 127.0.0.1) get one stateless answer or none, OPTIONS is answered to anyone
// without a transaction, a per-source token bucket silences a flooder, the
// server budget answers 503 statelessly while a live call's BYE still gets
// through, and the client budget refuses a new INVITE locally.
import { createSocket, type Socket } from 'node:dgram';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSipStack, type SipStack, type SipStackConfig } from '../src/sip/index.js';
import { inviteOptions, record, startStack } from './helpers.js';
import { ScriptedUas } from './support/scripted-uas.js';

const TIMERS = { T1: 20, T2: 160, T4: 200 };
let stacks: SipStack[] = [];
let sockets: Peer[] = [];
let uases: ScriptedUas[] = [];

afterEach(async () => {
  for (const p of sockets) p.socket.close();
  for (const u of uases) u.close();
  for (const s of stacks) await s.stop();
  stacks = [];
  sockets = [];
  uases = [];
});

async function stack(edge: SipStackConfig['edge'], extra: Partial<SipStackConfig> = {}) {
  const s = await startStack({ timers: TIMERS, edge, ...extra });
  stacks.push(s);
  return s;
}

interface Peer {
  socket: Socket;
  host: string;
  port: number;
  replies: string[];
}

/** A UDP peer on loopback address `host` (127.0.0.1 is the trunk). */
async function peer(host: string): Promise<Peer> {
  const socket = createSocket('udp4');
  const p: Peer = { socket, host, port: 0, replies: [] };
  socket.on('message', (m) => p.replies.push(m.toString('latin1')));
  await new Promise<void>((r) => socket.bind(0, host, () => r()));
  p.port = socket.address().port;
  sockets.push(p);
  return p;
}

let seq = 0;
function request(p: Peer, method: string, opts: { id?: string; toTag?: string } = {}): string {
  const id = opts.id ?? `edge-${++seq}`;
  const body =
    method === 'INVITE'
      ? 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n'
      : '';
  return (
    `${method} sip:+15550001111@127.0.0.1 SIP/2.0\r\n` +
    `Via: SIP/2.0/UDP ${p.host}:${p.port};branch=z9hG4bK${id};rport\r\n` +
    `Max-Forwards: 70\r\nFrom: <sip:x@${p.host}>;tag=f${id}\r\n` +
    `To: <sip:+15550001111@127.0.0.1>${opts.toTag ? `;tag=${opts.toTag}` : ''}\r\n` +
    `Call-ID: ${id}\r\nCSeq: 1 ${method}\r\nContact: <sip:x@${p.host}:${p.port}>\r\n` +
    (body ? 'Content-Type: application/sdp\r\n' : '') +
    `Content-Length: ${body.length}\r\n\r\n${body}`
  );
}

function send(p: Peer, s: SipStack, text: string): void {
  p.socket.send(Buffer.from(text, 'latin1'), s.localAddress('udp').port, '127.0.0.1');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await sleep(10);
}
const statusOf = (r: string) => Number(r.slice(8, 11));

describe('strangers (sip.strangers = reject)', () => {
  it('an INVITE from a stranger gets one stateless 403, no transaction and no retransmission; the trunk gets its 480', async () => {
    const s = await stack({ strangers: 'reject' });
    await s.setTrunkTargets([{ host: '127.0.0.1', transport: 'udp' }]);
    expect(s.edge().trustedAddresses).toBe(1);
    const stranger = await peer('127.0.0.2');
    send(stranger, s, request(stranger, 'INVITE'));
    await until(() => stranger.replies.length > 0);
    // Timer G (T1 = 20 ms) would have resent a transaction's 403 four times by now.
    await sleep(400);
    expect(stranger.replies.map(statusOf)).toEqual([403]);
    expect(s.stats().serverTransactions).toBe(0);
    expect(s.edge().dropped.stranger).toBe(1);

    const trunk = await peer('127.0.0.1');
    send(trunk, s, request(trunk, 'INVITE'));
    await until(() => trunk.replies.some((r) => statusOf(r) === 480));
    expect(s.stats().serverTransactions).toBe(1);
  });

  it('OPTIONS from anyone: 200 without a transaction, the same To tag for a retransmission (RFC 3261 §8.2.7)', async () => {
    const s = await stack({ strangers: 'reject' });
    const stranger = await peer('127.0.0.2');
    const options = request(stranger, 'OPTIONS');
    send(stranger, s, options);
    send(stranger, s, options);
    await until(() => stranger.replies.length === 2);
    expect(stranger.replies.map(statusOf)).toEqual([200, 200]);
    expect(stranger.replies[0]).toContain('Allow: ');
    const tags = stranger.replies.map((r) => /\r\nTo: [^\r]*;tag=([^;\r]+)/.exec(r)?.[1]);
    expect(tags[0]).toBeDefined();
    expect(tags[1]).toBe(tags[0]);
    expect(s.stats().serverTransactions).toBe(0);
    expect(s.stats().statelessResponses).toBe(2);
  });

  it('drop: a stranger gets nothing, not even a 400 for a malformed request; reject answers the 400', async () => {
    const dropping = await stack({ strangers: 'drop' });
    const rejecting = await stack({ strangers: 'reject' });
    const stranger = await peer('127.0.0.2');
    const malformed = request(stranger, 'INVITE').replace(
      'Max-Forwards: 70',
      'Max-Forwards: 70\r\nbad header line',
    );
    for (const s of [dropping, rejecting]) {
      send(stranger, s, request(stranger, 'INVITE'));
      send(stranger, s, request(stranger, 'BYE', { toTag: 'gone' }));
      send(stranger, s, malformed);
    }
    await until(() => stranger.replies.length >= 3);
    await sleep(200);
    expect(stranger.replies.map(statusOf).sort()).toEqual([400, 403, 403]);
    expect(dropping.edge().dropped).toMatchObject({ stranger: 2, malformed: 1 });
    expect(dropping.stats().statelessResponses).toBe(0);
  });

  it('a trunk given by name is trusted at its resolved address', async () => {
    const resolver = {
      resolveSrv: async () => [],
      resolve4: async (name: string) => (name === 'trunk.test' ? ['127.0.0.3'] : []),
      resolve6: async () => [],
    };
    const s = createSipStack(
      {
        udp: { host: '127.0.0.1', port: 0 },
        tcp: false,
        timers: TIMERS,
        edge: { strangers: 'reject' },
      },
      { dnsResolver: resolver },
    );
    await s.start();
    stacks.push(s);
    await s.setTrunkTargets([{ host: 'trunk.test', transport: 'udp' }]);
    expect(s.edge().trustedAddresses).toBe(1);
    const trunk = await peer('127.0.0.3');
    send(trunk, s, request(trunk, 'INVITE'));
    await until(() => trunk.replies.some((r) => statusOf(r) === 480));
    expect(trunk.replies.map(statusOf)).toContain(480);
    // the same list again resolves nothing new; an empty one trusts nobody
    await s.setTrunkTargets([]);
    expect(s.edge().trustedAddresses).toBe(0);
  });
});

describe('per-source rate limit', () => {
  it('a stranger over its bucket is silenced for blockMs, then answered again; the trunk is never limited', async () => {
    const s = await stack({ strangers: 'reject', rateLimit: { perSecond: 10, blockMs: 500 } });
    await s.setTrunkTargets([{ host: '127.0.0.1', transport: 'udp' }]);
    const stranger = await peer('127.0.0.2');
    const trunk = await peer('127.0.0.1');
    for (let i = 0; i < 30; i++) {
      send(stranger, s, request(stranger, 'OPTIONS'));
      send(trunk, s, request(trunk, 'OPTIONS'));
    }
    await until(() => trunk.replies.length === 30);
    await sleep(100);
    expect(trunk.replies).toHaveLength(30);
    expect(stranger.replies.length).toBeGreaterThanOrEqual(10);
    expect(stranger.replies.length).toBeLessThanOrEqual(15); // refilled while they arrive
    expect(s.edge().dropped.rate_limited).toBe(30 - stranger.replies.length);
    expect(s.edge().silencings).toBe(1);
    send(stranger, s, request(stranger, 'OPTIONS'));
    await sleep(150);
    const silenced = stranger.replies.length;
    await sleep(500);
    send(stranger, s, request(stranger, 'OPTIONS'));
    await until(() => stranger.replies.length > silenced);
    expect(stranger.replies.length).toBe(silenced + 1);
  });
});

describe('budgets', () => {
  it('at the server budget a trunk gets a stateless 503 with Retry-After, a stranger nothing, and a live call still hears its BYE', async () => {
    const s = await stack({ maxServerTransactions: 20 }); // strangers served: the stack default
    await s.setTrunkTargets([{ host: '127.0.0.1', transport: 'udp' }]);
    const far = await ScriptedUas.start({ defaultBehaviour: { kind: 'answer', byeAfterMs: 600 } });
    uases.push(far);
    const leg = s.invite(inviteOptions(far.port));
    const events = record(leg);
    await events.wait('answered');

    const trunk = await peer('127.0.0.1');
    const stranger = await peer('127.0.0.2');
    for (let i = 0; i < 25; i++) send(trunk, s, request(trunk, 'INVITE'));
    // the final status each INVITE got (Timer G resends the 480s: count Call-IDs, not datagrams)
    const finals = () => {
      const byCall = new Map<string, number>();
      for (const r of trunk.replies)
        if (statusOf(r) >= 400)
          byCall.set(/\r\nCall-ID: *([^\r]+)/.exec(r)?.[1] ?? '', statusOf(r));
      return [...byCall.values()];
    };
    await until(() => finals().length >= 25);
    expect(finals().filter((c) => c === 480)).toHaveLength(20);
    expect(finals().filter((c) => c === 503)).toHaveLength(5);
    expect(trunk.replies.find((r) => statusOf(r) === 503)).toContain('Retry-After: 5');
    expect(s.stats().serverTransactions).toBe(20);

    for (let i = 0; i < 5; i++) send(stranger, s, request(stranger, 'INVITE'));
    await sleep(100);
    expect(stranger.replies).toEqual([]);
    expect(s.edge().dropped.budget).toBe(10);

    // the far end hangs up while the budget is full: its BYE is in a live dialog
    const ended = await events.wait('ended');
    expect(ended.by).toBe('remote');
    expect(far.byes.size).toBe(0); // the BYE was the far end's, not ours
  });

  it('at the client budget a new INVITE fails at once with a local 503 and nothing is sent', async () => {
    const s = await stack({ maxClientTransactions: 2 });
    const far = await ScriptedUas.start({ defaultBehaviour: { kind: 'ring' } });
    uases.push(far);
    const legs = [0, 1, 2].map(() => record(s.invite(inviteOptions(far.port))));
    const failed = await legs[2]!.wait('failed');
    expect(failed).toMatchObject({ status: 503 });
    expect(failed.warning).toContain('local client transaction budget reached');
    await until(() => far.invites.length === 2);
    await sleep(100);
    expect(far.invites).toHaveLength(2);
    expect(s.stats().clientTransactionsRefused).toBe(1);
  });
});

describe('the UDP socket', () => {
  it('asks for 4 MiB of receive buffer by default and reports what it got and the kernel drops', async () => {
    const s = await stack({});
    const udp = s.edge().udp!;
    expect(udp.recvBufferBytes).toBeGreaterThan(212_992);
    if (process.platform === 'linux') expect(udp.kernelDrops).toBe(0);
  });

  it.runIf(existsSync('/proc/sys/net/core/rmem_max'))(
    'warns when net.core.rmem_max grants less than asked',
    async () => {
      const max = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
      const warnings: Array<Record<string, unknown>> = [];
      const noop = () => undefined;
      const logger = {
        debug: noop,
        info: noop,
        error: noop,
        warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ ...fields, msg }),
      };
      const s = createSipStack(
        { udp: { host: '127.0.0.1', port: 0 }, tcp: false, edge: { udpRecvBufferBytes: max * 2 } },
        { logger },
      );
      await s.start();
      stacks.push(s);
      expect(warnings).toEqual([
        {
          asked: max * 2,
          granted: max,
          msg: 'UDP receive buffer smaller than asked: raise net.core.rmem_max',
        },
      ]);
      expect(s.edge().udp!.recvBufferBytes).toBe(max * 2); // as Linux reports it
    },
  );
});
