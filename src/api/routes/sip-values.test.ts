// Nothing unsafe reaches the wire (issue 22, item 2): every trunk field that
// ends up in a SIP message refuses CR, LF and NUL with a 400 naming the
// field, on create and on PATCH; the stored trunk is unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unsafeTrunkField } from '../../model/sip-values.js';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;

beforeAll(async () => {
  gw = await startTestGateway();
  acme = await gw.tenant('acme');
});
afterAll(async () => gw.close());

const BAD = { CR: 'a\rb', LF: 'a\nX-Injected: 1', NUL: 'a\u0000b' };
const base = { name: 'carrier', host: 'sip.example.net' };

/** Each SIP-bound field with a bad value, and the field the 400 must name. */
const cases = (bad: string): Array<[string, Record<string, unknown>, string]> => [
  ['host', { host: `sip.example.net${bad}` }, 'host'],
  ['username', { username: bad }, 'username'],
  ['password', { password: bad }, 'password'],
  ['header value', { headers: { 'X-Campaign': bad } }, 'headers.X-Campaign'],
  ['header name', { headers: { [`X-A${bad}`]: 'v' } }, 'headers'],
  ['default caller ID', { defaultCallerId: `+12125550100${bad}` }, 'defaultCallerId'],
  ['caller IDs', { callerIds: [`+12125550100${bad}`] }, 'callerIds'],
  ['tech prefix', { techPrefix: `1${bad}` }, 'techPrefix'],
];

describe('SIP-bound trunk fields', () => {
  for (const [char, bad] of Object.entries(BAD)) {
    it.each(cases(bad))(
      `${char} in the %s: 400 naming the field, on create and on PATCH`,
      async (_n, field, named) => {
        const created = await acme.request({
          method: 'POST',
          url: '/api/v1/phones/sip-trunks',
          payload: { ...base, ...field },
        });
        expect(created.statusCode, created.body).toBe(400);
        expect(created.json().error).toBe('invalid_body');
        expect(created.json().reason).toContain(named);

        const ok = await acme.request({
          method: 'POST',
          url: '/api/v1/phones/sip-trunks',
          payload: base,
        });
        expect(ok.statusCode).toBe(201);
        const id = ok.json().id as string;
        const patched = await acme.request({
          method: 'PATCH',
          url: `/api/v1/phones/sip-trunks/${id}`,
          payload: field,
        });
        expect(patched.statusCode, patched.body).toBe(400);
        expect(patched.json().reason).toContain(named);
        const stored = (
          await acme.request({ method: 'GET', url: `/api/v1/phones/sip-trunks/${id}` })
        ).json();
        expect(JSON.stringify(stored)).not.toMatch(/\\r|\\n|\\u0000/);
      },
    );
  }

  it('says what is wrong with text for the wire, not the pattern', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/sip-trunks',
      payload: { ...base, username: 'u\r\nX-Injected: 1' },
    });
    expect(res.json().reason).toBe(
      'username must not contain CR, LF, NUL or other control characters (it goes into a SIP message).',
    );
  });

  it('a horizontal tab in a header value is linear whitespace (RFC 3261 §25.1), accepted', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/sip-trunks',
      payload: { ...base, headers: { 'X-Note': 'a\tb' } },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('unsafeTrunkField (the CLI and any other way in)', () => {
  const fine = {
    host: 'sip.example.net',
    username: 'u',
    password: 'p',
    headers: { 'X-A': 'v' },
    callerIds: ['+12125550100'],
    defaultCallerId: '+12125550100',
    techPrefix: '',
  };
  it('names the first unsafe field, or none', () => {
    expect(unsafeTrunkField(fine)).toBeUndefined();
    expect(unsafeTrunkField({ ...fine, host: 'a\r\nb' })).toBe('host');
    expect(unsafeTrunkField({ ...fine, username: 'a\nb' })).toBe('username');
    expect(unsafeTrunkField({ ...fine, password: 'a\u0000b' })).toBe('password');
    expect(unsafeTrunkField({ ...fine, headers: { 'X-A': 'v\r\nX-B: 1' } })).toBe('headers.X-A');
    expect(unsafeTrunkField({ ...fine, headers: { Via: 'v' } })).toBe('headers');
    expect(unsafeTrunkField({ ...fine, defaultCallerId: '+1212\n' })).toBe('defaultCallerId');
    expect(unsafeTrunkField({ ...fine, callerIds: ['+1212555\r'] })).toBe('callerIds');
    expect(unsafeTrunkField({ ...fine, techPrefix: '1\n' })).toBe('techPrefix');
  });
});
