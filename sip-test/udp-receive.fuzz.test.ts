// Fuzz through the receive path: mutated and random datagrams, a few
// thousand through the real UDP socket and 100k straight into the transport's
// receive function. Nothing may throw, no handler may fail, and the stack
// must still answer an OPTIONS afterwards.

import { createSocket, type Socket } from 'node:dgram';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipStack } from '../src/sip/index.js';
import { startStack } from './helpers.js';
import { BASES, datagram } from './support/mutated-datagrams.js';

let stack: SipStack;
let client: Socket;
const replies: Buffer[] = [];

beforeAll(async () => {
  stack = await startStack({ timers: { T1: 10, T2: 40, T4: 50 } });
  client = createSocket('udp4');
  client.on('message', (m) => replies.push(m));
  await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  client.close();
  await stack.stop();
});

async function optionsStillAnswered(): Promise<void> {
  replies.length = 0;
  const port = stack.localAddress('udp').port;
  const opt = BASES[0]!
    .toString('latin1')
    .replace('branch=z9hG4bKfz1', 'branch=z9hG4bKfinal')
    .replace('fz1', 'final-check');
  // Re-sent like a UAC would (Timer E): a loaded loopback may drop a datagram.
  for (let i = 0; i < 200 && !replies.some((r) => r.toString().includes('final-check')); i++) {
    if (i % 50 === 0) client.send(Buffer.from(opt, 'latin1'), port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 10));
  }
  const reply = replies.find((r) => r.toString().includes('final-check'));
  expect(reply?.toString().startsWith('SIP/2.0 200 OK')).toBe(true);
}

describe('receive-path fuzzing', () => {
  it('3,000 datagrams through the real UDP socket', async () => {
    const port = stack.localAddress('udp').port;
    const inputs = fc.sample(datagram, { seed: 20261122, numRuns: 3000 });
    for (let i = 0; i < inputs.length; i += 20) {
      for (const b of inputs.slice(i, i + 20)) client.send(b, port, '127.0.0.1');
      await new Promise((r) => setTimeout(r, 1));
    }
    const target = 3000;
    for (let i = 0; i < 200 && stack.stats().messagesIn < target; i++)
      await new Promise((r) => setTimeout(r, 10));
    const s = stack.stats();
    expect(s.messagesIn).toBeGreaterThan(target * 0.9); // loopback may drop a few under load
    expect(s.handlerErrors).toBe(0);
    expect(s.parseErrorsDropped).toBeGreaterThan(0);
    await optionsStillAnswered();
  });

  it('100,000 datagrams straight into the receive function', async () => {
    const port = client.address().port;
    const before = stack.stats();
    for (let chunk = 0; chunk < 10; chunk++) {
      for (const b of fc.sample(datagram, { seed: 1000 + chunk, numRuns: 10_000 })) {
        stack.receive(b, { transport: 'udp', host: '127.0.0.1', port });
      }
      await new Promise((r) => setTimeout(r, 0));
    }
    const s = stack.stats();
    expect(s.messagesIn - before.messagesIn).toBe(100_000);
    expect(s.handlerErrors).toBe(0);
    await optionsStillAnswered();
  }, 60_000);
});
