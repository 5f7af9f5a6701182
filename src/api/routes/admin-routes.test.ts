// An API key's IP restriction (spec §5.4) is one client address, or none:
// an unspecified address (0.0.0.0, :: in any spelling) would lock the key
// out, since no client has it, so it is refused on create and on PATCH.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';
import { isUnspecifiedAddress } from './admin-routes.js';

let gw: TestGateway;
let acme: Tenant;

beforeAll(async () => {
  gw = await startTestGateway();
  acme = await gw.tenant('acme');
});
afterAll(async () => gw.close());

const UNSPECIFIED = ['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0'];
const REASON =
  'allowedIp must be the single client address the key may be used from, not an unspecified address such as 0.0.0.0 or ::; leave it empty or null to allow any address.';

const createKey = (payload: Record<string, unknown>) =>
  acme.request({ method: 'POST', url: '/api/v1/api-keys', payload });
const patchKey = (id: string, payload: Record<string, unknown>) =>
  acme.request({ method: 'PATCH', url: `/api/v1/api-keys/${id}`, payload });

describe('allowedIp', () => {
  it.each(UNSPECIFIED)('%s: 400 invalid_body on create, and no key is made', async (ip) => {
    const before = gw.store.apiKeys.list(acme.company.id).length;
    const res = await createKey({ name: 'k', preset: 'full_access', allowedIp: ip });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_body', reason: REASON });
    expect(gw.store.apiKeys.list(acme.company.id)).toHaveLength(before);
  });

  it.each(UNSPECIFIED)('%s: 400 invalid_body on PATCH, the key unchanged', async (ip) => {
    const created = await createKey({ name: 'k', groups: ['Calls'], allowedIp: '127.0.0.1' });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const res = await patchKey(id, { allowedIp: ip });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_body', reason: REASON });
    const stored = await acme.request({ method: 'GET', url: `/api/v1/api-keys/${id}` });
    expect(stored.json().allowedIp).toBe('127.0.0.1');
    // and the key still works from its address
    const key = created.json().key as string;
    expect(
      (await acme.request({ method: 'POST', url: '/api/v1/phones/calls/query', key, payload: {} }))
        .statusCode,
    ).toBe(200);
  });

  it.each(['203.0.113.7', '2001:db8::1'])('%s is accepted on create and on PATCH', async (ip) => {
    const created = await createKey({ name: 'k', preset: 'full_access', allowedIp: ip });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().allowedIp).toBe(ip);
    const other = await createKey({ name: 'k2', groups: ['Agents'] });
    const patched = await patchKey(other.json().id as string, { allowedIp: ip });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().allowedIp).toBe(ip);
  });

  it('empty or null means any address', async () => {
    const created = await createKey({ name: 'k', preset: 'full_access', allowedIp: '10.1.2.3' });
    const id = created.json().id as string;
    expect((await patchKey(id, { allowedIp: '' })).json().allowedIp).toBeNull();
    expect((await patchKey(id, { allowedIp: '10.1.2.3' })).json().allowedIp).toBe('10.1.2.3');
    expect((await patchKey(id, { allowedIp: null })).json().allowedIp).toBeNull();
  });

  it('something that is not an address is refused by the schema', async () => {
    const res = await createKey({ name: 'k', preset: 'full_access', allowedIp: 'localhost' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_body');
    expect(res.json().reason).toMatch(/^allowedIp must be/);
  });
});

describe('isUnspecifiedAddress', () => {
  it('knows every spelling of 0.0.0.0 and ::, and nothing else', () => {
    for (const ip of [...UNSPECIFIED, '0::0', '::ffff:0:0'])
      expect(isUnspecifiedAddress(ip)).toBe(true);
    for (const ip of ['127.0.0.1', '::1', '10.0.0.0', '2001:db8::', 'not an ip', ''])
      expect(isUnspecifiedAddress(ip)).toBe(false);
  });
});

describe('what a refused key body is told', () => {
  it.each([
    [
      { name: 'k', preset: 'full_access', allowedIp: 'abc' },
      'allowedIp must be an IPv4 address or an IPv6 address.',
    ],
    [
      { name: 'k', groups: ['Calls', 'Calls'] },
      'groups must not hold the same item twice (items 0 and 1).',
    ],
  ])('%j → %s', async (payload, reason) => {
    expect((await createKey(payload)).json()).toEqual({ error: 'invalid_body', reason });
  });
});
