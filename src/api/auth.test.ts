// The auth matrix of spec §5 over app.inject().
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { registerAuth } from './auth.js';
import { startTestGateway, type Tenant, type TestGateway } from './test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;
let reseller: Tenant;
let subsidiary: Tenant;
let other: Tenant;

beforeAll(async () => {
  gw = await startTestGateway();
  acme = await gw.tenant('acme');
  reseller = await gw.tenant('reseller');
  subsidiary = await gw.tenant('sub', {}, reseller.company.id);
  other = await gw.tenant('other');
});
afterAll(() => gw.close());

const callBody = (t: Tenant) => ({
  destinationNumber: '+12125551234',
  agentId: t.agent.id,
  useAntiHarassmentProtection: true,
});
const UNAUTHORIZED = {
  error: 'unauthorized',
  reason: 'A valid API key is required in the x-api-key header.',
};

describe('authentication (spec §5)', () => {
  it('accepts a valid x-api-key', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: callBody(acme),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().callId).toEqual(expect.any(String));
  });

  const unauthorizedCases: Array<[string, (t: Tenant) => Record<string, string> | null]> = [
    ['no key', () => ({})],
    ['a Bearer token instead of x-api-key', (t) => ({ authorization: `Bearer ${t.key}` })],
    ['an unknown key', () => ({ 'x-api-key': 'ocg_not-a-real-key' })],
    ['an empty key', () => ({ 'x-api-key': '' })],
  ];
  it.each(unauthorizedCases)(
    '401 with one indistinguishable body for %s',
    async (_name, headers) => {
      const res = await acme.request({
        method: 'POST',
        url: '/api/v1/phones/calls/initiate-call',
        key: null,
        headers: headers(acme) ?? {},
        payload: callBody(acme),
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(UNAUTHORIZED);
    },
  );

  it('a revoked key is refused on the next request', async () => {
    const key = acme.addKey({ name: 'temp', fullAccess: true });
    expect((await acme.request({ method: 'GET', url: '/api/v1/agents', key })).statusCode).toBe(
      200,
    );
    const list = (await acme.request({ method: 'GET', url: '/api/v1/api-keys' })).json()
      .items as Array<{ id: string; name: string }>;
    const id = list.find((k) => k.name === 'temp')!.id;
    expect(
      (await acme.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}` })).statusCode,
    ).toBe(204);
    const res = await acme.request({ method: 'GET', url: '/api/v1/agents', key });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED);
  });

  it('an IP-restricted key works from its IP and is 401 from another', async () => {
    const good = acme.addKey({ name: 'ip-ok', fullAccess: true, allowedIp: '127.0.0.1' });
    const bad = acme.addKey({ name: 'ip-bad', fullAccess: true, allowedIp: '10.1.2.3' });
    expect(
      (await acme.request({ method: 'GET', url: '/api/v1/agents', key: good })).statusCode,
    ).toBe(200);
    const res = await acme.request({ method: 'GET', url: '/api/v1/agents', key: bad });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual(UNAUTHORIZED);
  });

  it('an IPv6 restriction matches however the address is spelt (RFC 5952 canonical form)', async () => {
    const key = acme.addKey({ name: 'ip6', fullAccess: true, allowedIp: '2001:DB8:0:0::1' });
    const from = (remoteAddress: string) =>
      gw.app.inject({
        method: 'GET',
        url: '/api/v1/agents',
        headers: { 'x-api-key': key },
        remoteAddress,
      });
    expect((await from('2001:db8::1')).statusCode).toBe(200);
    expect((await from('2001:db8::2')).statusCode).toBe(401);
  });

  it('refuses 0.0.0.0 as an IP restriction', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'x', preset: 'full_access', allowedIp: '0.0.0.0' },
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('operation groups (spec §5.3)', () => {
  it('403 when the key lacks the Calls group', async () => {
    const key = acme.addKey({ name: 'agents-only', groups: ['Agents'] });
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      key,
      payload: callBody(acme),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('operation_not_allowed');
    expect((await acme.request({ method: 'GET', url: '/api/v1/agents', key })).statusCode).toBe(
      200,
    );
  });

  it('a Calls key may initiate calls but not manage trunks or keys', async () => {
    const key = acme.addKey({ name: 'calls-only', groups: ['Calls'] });
    expect(
      (
        await acme.request({
          method: 'POST',
          url: '/api/v1/phones/calls/initiate-call',
          key,
          payload: { ...callBody(acme), destinationNumber: '+12125551299' },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await acme.request({ method: 'GET', url: '/api/v1/phones/sip-trunks', key })).statusCode,
    ).toBe(403);
    expect((await acme.request({ method: 'GET', url: '/api/v1/api-keys', key })).statusCode).toBe(
      403,
    );
  });
});

describe('x-company-id (spec §5.2)', () => {
  it('a reseller key acts for its own subsidiary, and the call appears only there', async () => {
    const res = await reseller.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      companyId: subsidiary.company.id,
      payload: callBody(subsidiary),
    });
    expect(res.statusCode).toBe(200);
    const { callId } = res.json();
    const asSub = await reseller.request({
      method: 'GET',
      url: `/api/v1/phones/calls/${callId}`,
      companyId: subsidiary.company.id,
    });
    expect(asSub.statusCode).toBe(200);
    expect(asSub.json().companyId).toBe(subsidiary.company.id);
    expect(
      (await reseller.request({ method: 'GET', url: `/api/v1/phones/calls/${callId}` })).statusCode,
    ).toBe(404);
  });

  it('403 for a company that is not its subsidiary', async () => {
    const res = await reseller.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      companyId: other.company.id,
      payload: callBody(other),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('company_access_denied');
  });

  it('a subsidiary key may not act for its parent', async () => {
    const res = await subsidiary.request({
      method: 'GET',
      url: '/api/v1/agents',
      companyId: reseller.company.id,
    });
    expect(res.statusCode).toBe(403);
  });

  it('403 for an unknown company id', async () => {
    expect(
      (await reseller.request({ method: 'GET', url: '/api/v1/agents', companyId: 'nope' }))
        .statusCode,
    ).toBe(403);
  });
});

describe('plan (spec §5.9)', () => {
  it('a plan without outbound calls refuses initiate-call', async () => {
    const t = await gw.tenant('no-outbound', { allowOutbound: false });
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: callBody(t),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('outbound_calls_not_allowed');
  });
});

describe('public routes', () => {
  it.each(['/healthz', '/readyz', '/openapi.json'])('%s needs no key', async (url) => {
    expect((await gw.app.inject({ method: 'GET', url })).statusCode).toBe(200);
  });
});

describe('authenticated unless public by construction', () => {
  it('every route in the OpenAPI document but the public ones answers 401 without a key', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
    );
    expect(routes.length).toBeGreaterThan(30);
    const open: string[] = [];
    for (const { method, path } of routes) {
      const url = path.replace(/\{[^}]+\}/g, 'x');
      const res = await gw.app.inject({ method: method as 'GET', url, payload: {} });
      if (res.statusCode !== 401) open.push(`${method} ${path}`);
      else expect(res.json()).toEqual(UNAUTHORIZED);
    }
    expect(open.sort()).toEqual(['GET /healthz', 'GET /readyz']);
    // hidden from the document, public too
    for (const url of ['/metrics', '/openapi.json', '/docs/'])
      expect((await gw.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
  });

  it('a route registered in the authenticated scope without config.access stops the start', async () => {
    const app = Fastify();
    void app.register(async (scope) => {
      registerAuth(scope, gw.store, new ManualClock(0));
      scope.get('/forgot-its-group', async () => ({ secret: true }));
    });
    await expect(app.ready()).rejects.toThrow(
      /GET \/forgot-its-group: an authenticated route must declare config.access/,
    );
  });
});
