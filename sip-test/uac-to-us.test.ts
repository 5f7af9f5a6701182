// SIPp calling us: out-of-dialog OPTIONS answered 200, INVITEs refused
// cleanly (inbound calls don't exist yet); trunk monitor between two stacks.
import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import type { SipStack } from '../src/sip/index.js';
import { startStack } from './helpers.js';
import { parseSip } from './media/mini-sip.js';
import { startSipp, type SippProcess } from './runner/sipp-runner.js';

let stacks: SipStack[] = [];
let sipp: SippProcess | undefined;

afterEach(async () => {
  sipp?.kill();
  for (const s of stacks) await s.stop();
  stacks = [];
  sipp = undefined;
});

describe('requests from SIPp to our stack', () => {
  for (const transport of ['udp', 'tcp'] as const) {
    it(`out-of-dialog OPTIONS gets 200 over ${transport} (uac-options-200)`, async () => {
      const stack = await startStack();
      stacks.push(stack);
      const { port } = stack.localAddress(transport);
      sipp = await startSipp({
        scenario: 'uac-options-200.xml',
        transport,
        remote: `127.0.0.1:${port}`,
      });
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
      expect(stack.stats().messagesIn).toBeGreaterThanOrEqual(1);
    });
  }

  it('an inbound INVITE is refused with 480 and a Warning, and the ACK absorbed (uac-invite-refused-480)', async () => {
    const stack = await startStack();
    stacks.push(stack);
    const { port } = stack.localAddress('udp');
    sipp = await startSipp({ scenario: 'uac-invite-refused-480.xml', remote: `127.0.0.1:${port}` });
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
    expect(stack.stats().serverTransactions).toBe(1); // Confirmed until Timer I
  });
});

describe('trunk monitor', () => {
  it('marks a trunk online while it answers OPTIONS and offline when it stops', async () => {
    const trunk = await startStack();
    const gw = await startStack({ timers: { T1: 20, T2: 160, T4: 200 } });
    stacks.push(gw, trunk);
    const monitor = gw.startTrunkMonitor({
      trunks: [
        { id: 't1', host: '127.0.0.1', port: trunk.localAddress('udp').port, transport: 'udp' },
      ],
      intervalMs: 100,
    });
    const online = await new Promise<{ trunkId: string; status: number }>((r) =>
      monitor.once('online', r),
    );
    expect(online).toEqual({ trunkId: 't1', status: 200 });
    expect(monitor.status('t1')).toBe('online');
    await trunk.stop();
    const offline = await new Promise<{ trunkId: string; cause: string }>((r) =>
      monitor.once('offline', r),
    );
    expect(offline.trunkId).toBe('t1');
    expect(monitor.status('t1')).toBe('offline');
    monitor.stop();
  });

  it('each ping is a new request: a fresh Call-ID and From tag, CSeq 1 (RFC 3261 §8.1.1.4)', async () => {
    const far = createSocket('udp4');
    await new Promise<void>((r) => far.bind(0, '127.0.0.1', () => r()));
    const pings: Array<{ callId: string; fromTag: string; cseq: string }> = [];
    far.on('message', (buf, from) => {
      const msg = parseSip(buf, from);
      if (!msg.startLine.startsWith('OPTIONS ')) return;
      const h = (n: string) => msg.headers.get(n)?.[0] ?? '';
      pings.push({
        callId: h('call-id'),
        fromTag: /;tag=([^;>]+)/.exec(h('from'))?.[1] ?? '',
        cseq: h('cseq'),
      });
      const ok = [
        'SIP/2.0 200 OK',
        ...(msg.headers.get('via') ?? []).map((v) => `Via: ${v}`),
        `From: ${h('from')}`,
        `To: ${h('to')};tag=far`,
        `Call-ID: ${h('call-id')}`,
        `CSeq: ${h('cseq')}`,
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n');
      far.send(ok, from.port, from.address);
    });
    const gw = await startStack();
    stacks.push(gw);
    const monitor = gw.startTrunkMonitor({
      trunks: [{ id: 't1', host: '127.0.0.1', port: far.address().port, transport: 'udp' }],
      intervalMs: 50,
    });
    try {
      const until = Date.now() + 5000;
      while (pings.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(pings.length).toBeGreaterThanOrEqual(3);
      expect(monitor.status('t1')).toBe('online');
      expect(new Set(pings.map((p) => p.callId)).size).toBe(pings.length);
      expect(new Set(pings.map((p) => p.fromTag)).size).toBe(pings.length);
      expect(pings.every((p) => p.cseq === '1 OPTIONS')).toBe(true);
    } finally {
      monitor.stop();
      far.close();
    }
  });
});
