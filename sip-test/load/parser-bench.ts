// Micro-benchmark of the SIP message layer's hot path: parse and serialise a
// typical INVITE with SDP and a 200 OK. Prints messages/s and µs/message,
// the median of several rounds.
//   npx tsx sip-test/load/parser-bench.ts

import {
  getHeader,
  getHeaders,
  parseCSeq,
  parseMessage,
  parseVia,
  serializeMessage,
  type SipMessage,
} from '../../src/sip/message/index.js';
import { INVITE_TEXT, OK_TEXT } from '../../src/sip/message/test-messages.js';

const ROUNDS = 7;
const PER_ROUND = 100_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function bench(label: string, fn: () => unknown): void {
  for (let i = 0; i < 20_000; i++) fn(); // warm-up
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) fn();
    const ns = Number(process.hrtime.bigint() - t0);
    rates.push(PER_ROUND / (ns / 1e9));
  }
  const rate = median(rates);
  console.log(
    `${label.padEnd(46)} ${Math.round(rate).toLocaleString('en-US').padStart(10)} msg/s ` +
      `${(1e6 / rate).toFixed(2).padStart(7)} µs/msg`,
  );
}

const invite = Buffer.from(INVITE_TEXT);
const ok = Buffer.from(OK_TEXT);
const inviteMsg: SipMessage = parseMessage(invite);
const okMsg: SipMessage = parseMessage(ok);

console.log(`node ${process.version}, ${ROUNDS} rounds × ${PER_ROUND} messages, median`);
console.log(`INVITE ${invite.length} bytes, 200 OK ${ok.length} bytes`);
bench('parse INVITE+SDP', () => parseMessage(invite));
bench('parse 200 OK+SDP', () => parseMessage(ok));
bench('parse 200 OK + top Via, CSeq, To tag (UAC path)', () => {
  const m = parseMessage(ok);
  parseVia(getHeaders(m, 'via')[0]!);
  parseCSeq(getHeader(m, 'cseq')!);
  return getHeader(m, 'to');
});
bench('serialize INVITE+SDP', () => serializeMessage(inviteMsg));
bench('serialize 200 OK+SDP', () => serializeMessage(okMsg));
