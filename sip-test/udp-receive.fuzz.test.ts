// Fuzz through the receive path: mutated and random datagrams, a few
// thousand through the real UDP socket and 100k straight into the transport's
// receive function. Nothing may throw, no handler may fail, and the stack
// must still answer an OPTIONS afterwards.

import { createSocket, type Socket } from 'node:dgram';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipStack } from '../src/sip/index.js';
import { startStack } from './helpers.js';

const BASES = [
  'OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKfz1;rport\r\nMax-Forwards: 70\r\nFrom: <sip:f@x>;tag=1\r\nTo: <sip:gw@127.0.0.1>\r\nCall-ID: fz1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n',
  'INVITE sip:+1555@127.0.0.1 SIP/2.0\r\nv: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKfz2\r\nMax-Forwards: 70\r\nf: "A" <sip:a@x>;tag=2\r\nt: <sip:b@y>\r\ni: fz2\r\nCSeq: 7 INVITE\r\nc: application/sdp\r\nl: 10\r\n\r\nv=0\r\no=- 1\r\n',
  'BYE sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKfz3\r\nMax-Forwards: 70\r\nFrom: <sip:f@x>;tag=1\r\nTo: <sip:gw@127.0.0.1>;tag=zz\r\nCall-ID: fz3\r\nCSeq: 2 BYE\r\nReason: Q.850;cause=16\r\nContent-Length: 0\r\n\r\n',
  'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKfz4\r\nFrom: <sip:gw@x>;tag=9\r\nTo: <sip:b@y>;tag=8\r\nCall-ID: fz4\r\nCSeq: 1 INVITE\r\nContact: <sip:b@127.0.0.1:5999>\r\nContent-Length: 0\r\n\r\n',
  'SIP/2.0 486 Busy Here\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKfz5\r\nFrom: <sip:gw@x>;tag=9\r\nTo: <sip:b@y>;tag=8\r\nCall-ID: fz5\r\nCSeq: 1 INVITE\r\nReason: Q.850;cause=17\r\nWarning: 399 h "x"\r\nContent-Length: 0\r\n\r\n',
  'ACK sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5999;branch=nocookie\r\nFrom: <sip:f@x>;tag=1\r\nTo: <sip:gw@127.0.0.1>;tag=1\r\nCall-ID: fz6\r\nCSeq: 1 ACK\r\n\r\n',
].map((s) => Buffer.from(s, 'latin1'));

const TOKENS = [
  'SIP/2.0',
  'INVITE',
  'Via:',
  'To:',
  ';tag=',
  '\r\n',
  ':',
  ' ',
  ',',
  '<',
  '>',
  '"',
  'sip:',
  'CSeq: 1',
  'Content-Length: 99999',
  '\0',
  'z9hG4bK',
  ';rport',
  ';received=',
  '%',
  '\r\n\r\n',
];

const mutated = fc
  .record({
    base: fc.constantFrom(...BASES),
    ops: fc.array(
      fc.tuple(
        fc.constantFrom('flip', 'del', 'ins', 'trunc', 'tok'),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom(...TOKENS),
      ),
      {
        minLength: 1,
        maxLength: 6,
      },
    ),
  })
  .map(({ base, ops }) => {
    let b = Buffer.from(base);
    for (const [op, pos, byte, tok] of ops) {
      const i = b.length === 0 ? 0 : pos % b.length;
      if (op === 'flip') b[i] = byte;
      else if (op === 'del') b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1 + (byte % 8))]);
      else if (op === 'ins')
        b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
      else if (op === 'trunc') b = b.subarray(0, i);
      else b = Buffer.concat([b.subarray(0, i), Buffer.from(tok, 'latin1'), b.subarray(i)]);
    }
    return b;
  });

const datagram = fc.oneof(
  { weight: 6, arbitrary: mutated },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 1500 }).map((a) => Buffer.from(a)) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom(...TOKENS), { maxLength: 60 })
      .map((t) => Buffer.from(t.join(''), 'latin1')),
  },
);

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
