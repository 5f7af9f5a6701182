// RFC 4475 torture messages, one row per file in sip-test/testdata/rfc4475
// (the project's shared test data, kept in the repository so a fresh clone
// tests on its own; SHA256SUMS, taken from the shared copy on 2026-11-24,
// pins every file).
// Each row says what a robust UAS does with it: parse ("accepted" when the
// §8.2 checks let it through), answer with a status, or drop it; plus spot
// checks of the fields RFC 4475 describes. A row marked knownFailure asserts
// that it still fails, so a fix forces the table to be updated.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkIncomingRequest,
  checkIncomingResponse,
  getHeader,
  getHeaders,
  parseCSeq,
  parseMessage,
  parseNameAddr,
  parseUri,
  parseVia,
  serializeMessage,
  SipParseError,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './index.js';

const DIR = new URL('../../../sip-test/testdata/rfc4475/', import.meta.url);

type Outcome = 'accepted' | 'drop' | number;

interface Row {
  section: string;
  expect: Outcome;
  check?: (m: SipMessage) => void;
  knownFailure?: string;
}

const req = (m: SipMessage): SipRequest => m as SipRequest;
const res = (m: SipMessage): SipResponse => m as SipResponse;
const na = (m: SipMessage, name: string) => parseNameAddr(getHeader(m, name)!);
const vias = (m: SipMessage) => getHeaders(m, 'via').flatMap(parseVia);

const TABLE: Record<string, Row> = {
  // 3.1.1 valid messages
  wsinv: {
    section: '3.1.1.1',
    expect: 'accepted',
    check: (m) => {
      expect(req(m).method).toBe('INVITE');
      expect(parseUri(req(m).uri).params).toEqual({ unknownparam: null });
      const to = na(m, 'to');
      expect(to.uri.user).toBe('vivekg');
      expect(to.params['tag']).toBe('1918181833n');
      const from = na(m, 'from');
      expect(from.displayName).toBe('J Rosenberg \\"');
      expect(from.params['tag']).toBe('98asjd8');
      expect(getHeader(m, 'max-forwards')).toBe('0068');
      expect(parseCSeq(getHeader(m, 'cseq')!)).toEqual({ seq: 9, method: 'INVITE' });
      expect(vias(m).map((v) => [v.transport, v.host, v.branch])).toEqual([
        ['UDP', '192.0.2.2', '390skdjuw'],
        ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
        ['UDP', '192.168.255.111', 'z9hG4bK30239'],
      ]);
      expect(getHeader(m, 'subject')).toBe('');
      expect(getHeader(m, 'newfangledheader')).toBe('newfangled value continued newfangled value');
      expect(getHeader(m, 'UnknownHeaderWithUnusualValue')).toBe(';;,,;;,;');
      const route = parseNameAddr(getHeaders(m, 'route')[0]!);
      expect(route.uri.params).toEqual({
        lr: null,
        unknownwith: 'value',
        'unknown-no-value': null,
      });
      const contact = parseNameAddr(getHeaders(m, 'contact')[0]!);
      expect(contact.displayName).toBe('Quoted string ""');
      expect(contact.params).toEqual({ newparam: 'newvalue', secondparam: null, q: '0.33' });
      expect(m.body.length).toBe(150);
    },
  },
  intmeth: {
    section: '3.1.1.2',
    expect: 'accepted',
    check: (m) => {
      const method = "!interesting-Method0123456789_*+`.%indeed'~";
      expect(req(m).method).toBe(method);
      expect(parseCSeq(getHeader(m, 'cseq')!)).toEqual({ seq: 139122385, method });
      const uri = parseUri(req(m).uri);
      expect(uri.user).toBe("1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
      expect(uri.password).toBe("&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
      expect(uri.host).toBe('example.com');
      expect(na(m, 'to').displayName).toBe('BEL:\x07 NUL:\x00 DEL:\x7f');
      const from = na(m, 'from');
      expect(from.displayName).toBe("token1~` token2'+_ token3*%!.-");
      expect(from.params['tag']).toBe("_token~1'+`*%!-.");
      expect(from.params["fromparam''~+*_!.-%"]).toBe('"работающий"');
      expect(vias(m)[0]!.branch).toBe("z9hG4bK-.!%66*_+`'~");
      expect(getHeader(m, 'call-id')).toBe('intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{');
      expect(getHeader(m, "extensionHeader-!.%*+_`'~")).toBe('\ufeff大停電');
    },
  },
  esc01: {
    section: '3.1.1.3',
    expect: 'accepted',
    check: (m) => {
      const ruri = parseUri(req(m).uri);
      expect([ruri.user, ruri.host]).toEqual(['sips:user@example.com', 'example.net']);
      expect(na(m, 'to').uri.user).toBe('user');
      expect(na(m, 'from').uri.user).toBe('I have spaces');
      const contact = parseNameAddr(getHeaders(m, 'contact')[0]!);
      expect(contact.uri.user).toBe('caller');
      expect(contact.uri.params).toEqual({ lr: null, name: 'value%41' });
      expect(getHeader(m, 'content-type')).toBe('application/sdp');
      expect(m.body.length).toBe(150);
    },
  },
  escnull: {
    section: '3.1.1.4',
    expect: 'accepted',
    check: (m) => {
      expect(na(m, 'to').uri.user).toBe('null-\0-null');
      expect(getHeaders(m, 'contact').map((c) => parseNameAddr(c).uri.user)).toEqual([
        '\0',
        '\0\0',
      ]);
    },
  },
  esc02: {
    section: '3.1.1.5',
    expect: 'accepted', // a method the UA doesn't know: 501 above this layer
    check: (m) => {
      expect(req(m).method).toBe('RE%47IST%45R');
      expect(parseCSeq(getHeader(m, 'cseq')!).method).toBe('RE%47IST%45R');
      expect(na(m, 'to').displayName).toBe('%Z%45');
      expect(vias(m)[0]!.branch).toBe('z9hG4bK209%fzsnel234');
      expect(getHeaders(m, 'contact')).toHaveLength(2);
      expect(getHeader(m, 'C%6Fntact')).toBe('<sip:alias2@host2.example.com>');
    },
  },
  lwsdisp: {
    section: '3.1.1.6',
    expect: 'accepted',
    check: (m) => expect(na(m, 'from').displayName).toBe('caller'),
  },
  longreq: {
    section: '3.1.1.7',
    expect: 'accepted',
    check: (m) => {
      const to = na(m, 'to');
      expect(to.displayName).toMatch(/^I have a user name of (extreme){10} proportion$/);
      expect(to.uri.port).toBe(6000);
      expect(na(m, 'from').params['tag']).toMatch(/^1(298){50,}/);
      const v = vias(m);
      expect(v).toHaveLength(34);
      expect(v[33]!.received).toBe('192.0.2.5');
      expect(v[33]!.branch).toMatch(/^verylong(long)+branchvalue$/);
      expect(getHeader(m, 'call-id')).toMatch(/^longreq\.one(really)+longcallid$/);
      expect(m.body.length).toBe(150);
    },
  },
  dblreq: {
    section: '3.1.1.8',
    expect: 'accepted',
    check: (m) => {
      expect(req(m).method).toBe('REGISTER');
      expect(getHeader(m, 'call-id')).toBe('dblreq.0ha0isndaksdj99sdfafnl3lk233412');
      expect(m.body.length).toBe(0);
    },
  },
  semiuri: {
    section: '3.1.1.9',
    expect: 'accepted',
    check: (m) => {
      const uri = parseUri(req(m).uri);
      expect([uri.user, uri.host, uri.params]).toEqual([
        'user;par=u@example.net',
        'example.com',
        {},
      ]);
      expect(getHeaders(m, 'accept')).toHaveLength(6);
    },
  },
  transports: {
    section: '3.1.1.10',
    expect: 'accepted',
    check: (m) =>
      expect(vias(m).map((v) => v.transport)).toEqual(['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']),
  },
  mpart01: {
    section: '3.1.1.11',
    expect: 415, // valid, but we only take application/sdp bodies (RFC 3261 §8.2.3)
    check: (m) => {
      expect(m.body.length).toBe(553);
      expect(getHeader(m, 'content-type')).toBe('multipart/mixed;boundary=7a9cbec02ceef655');
      expect(m.body.subarray(0, 18).toString()).toBe('--7a9cbec02ceef655');
    },
  },
  unreason: {
    section: '3.1.1.12',
    expect: 'accepted',
    check: (m) => {
      expect(res(m).status).toBe(200);
      expect(res(m).reason).toMatch(/^= 2\*\*3 \* 5\*\*2 \u043d\u043e /);
      expect(m.body.length).toBe(154);
    },
  },
  noreason: {
    section: '3.1.1.13',
    expect: 'accepted',
    check: (m) => expect([res(m).status, res(m).reason]).toEqual([100, '']),
  },
  // 3.1.2 invalid messages
  badinv01: { section: '3.1.2.1', expect: 400 },
  clerr: { section: '3.1.2.2', expect: 400 },
  ncl: { section: '3.1.2.3', expect: 400 },
  scalar02: { section: '3.1.2.4', expect: 400 },
  scalarlg: { section: '3.1.2.5', expect: 'drop' },
  quotbal: { section: '3.1.2.6', expect: 400 },
  ltgtruri: { section: '3.1.2.7', expect: 400 },
  lwsruri: { section: '3.1.2.8', expect: 400 },
  lwsstart: { section: '3.1.2.9', expect: 400 },
  trws: { section: '3.1.2.10', expect: 400 },
  escruri: { section: '3.1.2.11', expect: 400 },
  baddate: { section: '3.1.2.12', expect: 400 },
  regbadct: { section: '3.1.2.13', expect: 400 },
  badaspec: { section: '3.1.2.14', expect: 400 },
  baddn: { section: '3.1.2.15', expect: 400 },
  badvers: { section: '3.1.2.16', expect: 505 },
  mismatch01: { section: '3.1.2.17', expect: 400 },
  mismatch02: { section: '3.1.2.18', expect: 400 },
  bigcode: { section: '3.1.2.19', expect: 'drop' },
  // 3.2 transaction layer
  badbranch: {
    section: '3.2.1',
    expect: 'accepted',
    check: (m) => expect(vias(m)[0]!.branch).toBe('z9hG4bK'),
  },
  // 3.3 application layer
  insuf: { section: '3.3.1', expect: 400 },
  unkscm: { section: '3.3.2', expect: 416 },
  novelsc: {
    section: '3.3.3',
    expect: 416,
    check: (m) => expect(parseUri(req(m).uri).scheme).toBe('soap.beep'),
  },
  unksm2: {
    section: '3.3.4',
    expect: 'accepted', // schemes in header fields are not ours to judge (§8.2.2.1)
    check: (m) => {
      expect(na(m, 'to').uri).toMatchObject({ scheme: 'isbn', opaque: '2983792873' });
      expect(na(m, 'from').uri.scheme).toBe('http');
      expect(parseNameAddr(getHeaders(m, 'contact')[0]!).uri.scheme).toBe('name');
    },
  },
  bext01: {
    section: '3.3.5',
    expect: 420,
    check: (m) =>
      expect(checkIncomingRequest(req(m))?.headers).toEqual([
        { name: 'unsupported', value: 'nothingSupportsThis, nothingSupportsThisEither' },
      ]),
  },
  invut: {
    section: '3.3.6',
    expect: 415,
    check: (m) =>
      expect(checkIncomingRequest(req(m))?.headers).toEqual([
        { name: 'accept', value: 'application/sdp' },
      ]),
  },
  regaut01: {
    section: '3.3.7',
    expect: 'accepted',
    check: (m) =>
      expect(getHeader(m, 'authorization')).toBe('NoOneKnowsThisScheme opaque-data=here'),
  },
  multi01: { section: '3.3.8', expect: 400 },
  mcl01: { section: '3.3.9', expect: 400 },
  bcast: { section: '3.3.10', expect: 'drop' },
  zeromf: { section: '3.3.11', expect: 'accepted' },
  cparam01: {
    section: '3.3.12',
    expect: 'accepted',
    check: (m) => {
      const c = parseNameAddr(getHeaders(m, 'contact')[0]!);
      expect([c.uri.user, c.uri.params, c.params]).toEqual([
        '+19725552222',
        {},
        { unknownparam: null },
      ]);
    },
  },
  cparam02: {
    section: '3.3.13',
    expect: 'accepted',
    check: (m) => {
      const c = parseNameAddr(getHeaders(m, 'contact')[0]!);
      expect([c.uri.params, c.params]).toEqual([{ unknownparam: null }, {}]);
    },
  },
  regescrt: {
    section: '3.3.14',
    expect: 'accepted',
    check: (m) =>
      expect(parseNameAddr(getHeader(m, 'contact')!).uri.headers).toEqual({
        Route: '<sip:sip.example.com>',
      }),
  },
  sdp01: { section: '3.3.15', expect: 406 },
  // 3.4 backward compatibility
  inv2543: {
    section: '3.4.1',
    expect: 'accepted',
    check: (m) => {
      expect(vias(m)[0]!.branch).toBeUndefined();
      expect(na(m, 'from').params['tag']).toBeUndefined();
      expect(m.body.length).toBeGreaterThan(0);
    },
  },
};

function outcome(buf: Buffer): { outcome: Outcome; msg?: SipMessage } {
  let msg: SipMessage;
  try {
    msg = parseMessage(buf);
  } catch (err) {
    if (!(err instanceof SipParseError)) throw err;
    return { outcome: err.status ?? 'drop' };
  }
  if (msg.kind === 'response')
    return { outcome: checkIncomingResponse(msg) ? 'drop' : 'accepted', msg };
  return { outcome: checkIncomingRequest(msg)?.status ?? 'accepted', msg };
}

describe('RFC 4475 torture messages', () => {
  const files = readdirSync(DIR)
    .filter((f) => f.endsWith('.dat'))
    .map((f) => f.slice(0, -4))
    .sort();

  it('holds exactly the shared files, byte for byte (SHA256SUMS)', () => {
    const sums = readFileSync(new URL('SHA256SUMS', DIR), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/) as [string, string]);
    const listed = sums.map(([, name]) => name).sort();
    expect(
      readdirSync(DIR)
        .filter((f) => f !== 'SHA256SUMS')
        .sort(),
    ).toEqual(listed);
    for (const [sum, name] of sums) {
      const got = createHash('sha256')
        .update(readFileSync(new URL(name, DIR)))
        .digest('hex');
      expect(got, name).toBe(sum);
    }
  });

  it('has a row for every file and a file for every row', () => {
    expect(files).toEqual(Object.keys(TABLE).sort());
  });

  it.each(files)('%s', (name) => {
    const row = TABLE[name]!;
    const buf = readFileSync(new URL(name + '.dat', DIR));
    const run = (): void => {
      const got = outcome(buf);
      expect(got.outcome, `RFC 4475 §${row.section}`).toBe(row.expect);
      if (got.msg) {
        row.check?.(got.msg);
        // Round trip: serialising and parsing again keeps every header and the body.
        const again = parseMessage(serializeMessage(got.msg));
        const strip = (m: SipMessage) => m.headers.filter((h) => h.name !== 'content-length');
        expect(strip(again)).toEqual(strip(got.msg));
        expect(again.body.equals(got.msg.body)).toBe(true);
      }
    };
    if (row.knownFailure) expect(run, row.knownFailure).toThrow();
    else run();
  });
});
