// The receive-path fuzzer's datagrams (sip-test/udp-receive.fuzz.test.ts),
// shared with the edge flood (sip-test/edge-flood.test.ts and
// sip-test/load/edge-flood.ts): six real messages (OPTIONS, INVITE, BYE in a
// dialog, 200, 486, ACK) mutated by flips, deletions, insertions, truncation
// and SIP tokens, plus random bytes and token soup.

import fc from 'fast-check';

export const BASES = [
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

/** The fuzzer over other bases (e.g. BASES with the sender's own address in Via). */
export function datagramArbitrary(bases: Buffer[]): fc.Arbitrary<Buffer> {
  const mutated = fc
    .record({
      base: fc.constantFrom(...bases),
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
        else if (op === 'del')
          b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1 + (byte % 8))]);
        else if (op === 'ins')
          b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
        else if (op === 'trunc') b = b.subarray(0, i);
        else b = Buffer.concat([b.subarray(0, i), Buffer.from(tok, 'latin1'), b.subarray(i)]);
      }
      return b;
    });

  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 1500 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.constantFrom(...TOKENS), { maxLength: 60 })
        .map((t) => Buffer.from(t.join(''), 'latin1')),
    },
  );
}

export const datagram = datagramArbitrary(BASES);

/** BASES sent from host:port: their Via sent-by (and so every answer) points back at the sender. */
export function basesFrom(host: string, port: number): Buffer[] {
  return BASES.map((b) =>
    Buffer.from(b.toString('latin1').replaceAll('127.0.0.1:5999', `${host}:${port}`), 'latin1'),
  );
}

/** `n` datagrams, the same for the same seed and bases. */
export function mutatedDatagrams(n: number, seed: number, bases: Buffer[] = BASES): Buffer[] {
  return fc.sample(datagramArbitrary(bases), { seed, numRuns: n });
}
