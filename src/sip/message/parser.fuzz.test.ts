// Fuzzing the receive path: mutated torture messages, random header soup and
// random text through parseMessage, findMessageLength, every structured
// reader and the request/response checks. The only acceptable throw is
// SipParseError; a parsed message must survive serialise → parse unchanged.
// Fixed seeds keep runs reproducible; about 110,000 cases in all.

import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseChallenge } from './challenge.js';
import { parseCSeq } from './cseq.js';
import { findMessageLength } from './find-message-length.js';
import { getHeaders, splitList } from './headers.js';
import { formatNameAddr, parseNameAddr } from './name-addr.js';
import { parseMessage } from './parse-message.js';
import { parseReason } from './reason.js';
import { checkIncomingRequest } from './request-checks.js';
import { checkIncomingResponse } from './response-checks.js';
import { serializeMessage } from './serialize-message.js';
import { BYE_TEXT, INVITE_TEXT, OK_TEXT } from './test-messages.js';
import { SipParseError, type SipMessage } from './types.js';
import { formatUri, parseUri } from './uri.js';
import { formatVia, parseVia } from './via.js';
import { parseWarning } from './warning.js';

const DIR = new URL('../../../sip-test/testdata/rfc4475/', import.meta.url);
const BASES: Buffer[] = [
  ...readdirSync(DIR)
    .filter((f) => f.endsWith('.dat'))
    .map((f) => readFileSync(new URL(f, DIR))),
  ...[INVITE_TEXT, OK_TEXT, BYE_TEXT].flatMap((t) => [
    Buffer.from(t),
    Buffer.from(t.replace(/\r\n/g, '\n')),
  ]),
];

/** Runs fn; a SipParseError is fine, anything else fails the property. */
function tolerate<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (err instanceof SipParseError) return undefined;
    throw err;
  }
}

const READERS: Record<string, (v: string) => unknown> = {
  via: (v) => parseVia(v).map(formatVia),
  from: (v) => formatNameAddr(parseNameAddr(v)),
  to: (v) => formatNameAddr(parseNameAddr(v)),
  contact: (v) => (v === '*' ? v : formatNameAddr(parseNameAddr(v))),
  route: (v) => parseNameAddr(v),
  'record-route': (v) => parseNameAddr(v),
  cseq: (v) => parseCSeq(v),
  reason: (v) => parseReason(v),
  warning: (v) => parseWarning(v),
  'www-authenticate': (v) => parseChallenge(v),
  'proxy-authenticate': (v) => parseChallenge(v),
};

function exercise(buf: Buffer): void {
  tolerate(() => findMessageLength(buf, 0));
  const m = tolerate(() => parseMessage(buf));
  if (!m) return;
  for (const name of new Set(m.headers.map((h) => h.name))) {
    const reader = READERS[name];
    for (const v of getHeaders(m, name)) {
      splitList(v);
      if (reader) tolerate(() => reader(v));
    }
  }
  if (m.kind === 'request') {
    tolerate(() => formatUri(parseUri(m.uri)));
    checkIncomingRequest(m, { supported: ['timer'] });
  } else {
    checkIncomingResponse(m);
  }
  roundTrip(m);
}

function roundTrip(m: SipMessage): void {
  const again = parseMessage(serializeMessage(m));
  const strip = (x: SipMessage) => x.headers.filter((h) => h.name !== 'content-length');
  expect(strip(again)).toEqual(strip(m));
  expect(again.body.equals(m.body)).toBe(true);
}

type Op =
  | { k: 'flip'; at: number; byte: number }
  | { k: 'insert'; at: number; bytes: Uint8Array }
  | { k: 'delete'; at: number; len: number }
  | { k: 'truncate'; at: number }
  | { k: 'dupLine' | 'dropLine' | 'swapLines'; at: number; other: number }
  | { k: 'length'; value: string };

const SPECIAL = [0, 9, 10, 13, 32, 34, 37, 44, 58, 59, 60, 61, 62, 64, 91, 92, 93, 0xc3, 0xff];
const byteArb = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(...SPECIAL));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ k: fc.constant('flip' as const), at: fc.nat(), byte: byteArb }),
  fc.record({
    k: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ maxLength: 8 }),
  }),
  fc.record({
    k: fc.constant('delete' as const),
    at: fc.nat(),
    len: fc.integer({ min: 1, max: 12 }),
  }),
  fc.record({ k: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    k: fc.constantFrom('dupLine' as const, 'dropLine' as const, 'swapLines' as const),
    at: fc.nat(),
    other: fc.nat(),
  }),
  fc.record({
    k: fc.constant('length' as const),
    value: fc.constantFrom(
      '99999999999999999999',
      '4294967296',
      '-1',
      '',
      ' 0 ',
      '1e3',
      '0x10',
      '5',
    ),
  }),
);

function apply(base: Buffer, ops: Op[]): Buffer {
  let b = base;
  for (const op of ops) {
    const at = 'at' in op && b.length > 0 ? op.at % (b.length + 1) : 0;
    switch (op.k) {
      case 'flip':
        if (b.length > 0) {
          b = Buffer.from(b);
          b[at % b.length] = op.byte;
        }
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), op.bytes, b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + op.len)]);
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'length':
        b = Buffer.from(
          b
            .toString('latin1')
            .replace(/^(Content-Length|l)[ \t]*:.*$/im, 'Content-Length: ' + op.value),
          'latin1',
        );
        break;
      default: {
        const lines = b.toString('latin1').split('\n');
        const i = op.at % lines.length;
        const j = op.other % lines.length;
        if (op.k === 'dupLine') lines.splice(j, 0, lines[i]!);
        else if (op.k === 'dropLine') lines.splice(i, 1);
        else [lines[i], lines[j]] = [lines[j]!, lines[i]!];
        b = Buffer.from(lines.join('\n'), 'latin1');
      }
    }
  }
  return b;
}

const HEADER_NAMES = [
  'Via',
  'v',
  'From',
  'f',
  'To',
  't',
  'Call-ID',
  'i',
  'CSeq',
  'Contact',
  'm',
  'Route',
  'Record-Route',
  'Max-Forwards',
  'Content-Length',
  'l',
  'Content-Type',
  'c',
  'Require',
  'Accept',
  'Reason',
  'Warning',
  'WWW-Authenticate',
  'Proxy-Authenticate',
  'Date',
  'X-Junk',
];
const VALUE_CHARS = fc.constantFrom(
  ...'abcz09 \t;,=:@<>"\\/?&%.-+*[]_~!\'`()'.split(''),
  'sip:',
  'SIP/2.0/UDP ',
  'branch=z9hG4bK',
  'tag=',
  'Digest realm="r"',
  'Q.850;cause=',
  '\u00fc',
  '\0',
  '\r',
  '\r\n ',
);
const valueArb = fc.string({ unit: VALUE_CHARS, maxLength: 40 });
const soupArb = fc
  .record({
    start: fc.constantFrom(
      'INVITE sip:a@b SIP/2.0',
      'OPTIONS sips:[::1]:5061;lr SIP/2.0',
      'ACK tel:+1555 SIP/2.0',
      'SIP/2.0 200 OK',
      'SIP/2.0 407 Proxy Auth',
      'FOO x:y SIP/2.0',
      'SIP/2.0 1000 X',
    ),
    headers: fc.array(
      fc.tuple(
        fc.constantFrom(...HEADER_NAMES),
        fc.constantFrom(':', ' :', ': ', ':\r\n '),
        valueArb,
      ),
      { maxLength: 14 },
    ),
    eol: fc.constantFrom('\r\n', '\n'),
    body: fc.string({ maxLength: 30 }),
  })
  .map(({ start, headers, eol, body }) =>
    Buffer.from(
      start + eol + headers.map(([n, c, v]) => n + c + v + eol).join('') + eol + body,
      'utf8',
    ),
  );

const textArb = fc.string({ unit: VALUE_CHARS, maxLength: 60 });

const SEED = 4475;

describe('parser fuzz', () => {
  it('survives mutated torture and typical messages (60,000 cases)', () => {
    fc.assert(
      fc.property(
        fc.nat(BASES.length - 1),
        fc.array(opArb, { minLength: 1, maxLength: 6 }),
        (i, ops) => {
          exercise(apply(BASES[i]!, ops));
        },
      ),
      { seed: SEED, numRuns: 60_000 },
    );
  });

  it('survives random header soup (30,000 cases)', () => {
    fc.assert(
      fc.property(soupArb, (buf) => exercise(buf)),
      { seed: SEED + 1, numRuns: 30_000 },
    );
  });

  it('survives random text in every structured reader (20,000 cases)', () => {
    fc.assert(
      fc.property(textArb, (s) => {
        for (const reader of Object.values(READERS)) tolerate(() => reader(s));
        tolerate(() => formatUri(parseUri(s)));
        splitList(s);
      }),
      { seed: SEED + 2, numRuns: 20_000 },
    );
  });

  it('survives huge Content-Length, NULs and empty input', () => {
    for (const base of BASES) {
      for (const cl of ['9'.repeat(400), '1'.repeat(16), String(2 ** 53)]) {
        exercise(
          Buffer.from(
            base
              .toString('latin1')
              .replace(/^(Content-Length|l)[ \t]*:.*$/im, 'Content-Length: ' + cl),
            'latin1',
          ),
        );
      }
      exercise(Buffer.from(base.toString('latin1').replace(/ /g, '\0'), 'latin1'));
    }
    for (const b of ['', '\r\n', '\n\n', '\0', 'SIP/2.0', ' \r\n\r\n']) exercise(Buffer.from(b));
    exercise(Buffer.alloc(200_000, 0x41));
  });
});
