// Tenancy isolation, API key display rules (spec §5.5-5.6), CRUD of the
// configuration objects, and the generic HTTP error answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../error-catalogue.js';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;
let globex: Tenant;

beforeAll(async () => {
  gw = await startTestGateway({ bodyLimitBytes: 4096 });
  acme = await gw.tenant('acme');
  globex = await gw.tenant('globex');
});
afterAll(() => gw.close());

describe('tenancy isolation', () => {
  it("another company's call, trunk, agent and key answer 404", async () => {
    const call = (
      await acme.request({
        method: 'POST',
        url: '/api/v1/phones/calls/initiate-call',
        payload: { destinationNumber: '+12125552001', agentId: acme.agent.id },
      })
    ).json();
    const keys = (await acme.request({ method: 'GET', url: '/api/v1/api-keys' })).json()
      .items as Array<{ id: string }>;
    for (const url of [
      `/api/v1/phones/calls/${call.callId}`,
      `/api/v1/phones/sip-trunks/${acme.trunk.id}`,
      `/api/v1/agents/${acme.agent.id}`,
      `/api/v1/api-keys/${keys[0]!.id}`,
    ]) {
      const res = await globex.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
    expect(
      (await globex.request({ method: 'DELETE', url: `/api/v1/agents/${acme.agent.id}` }))
        .statusCode,
    ).toBe(404);
    expect(
      (await globex.request({ method: 'POST', url: `/api/v1/phones/calls/${call.callId}/hangup` }))
        .statusCode,
    ).toBe(404);
  });

  it("a call may not use another company's agent or trunk", async () => {
    const viaAgent = await globex.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: { destinationNumber: '+12125552002', agentId: acme.agent.id },
    });
    expect(viaAgent.json().error).toBe('agent_not_found');
    const viaTrunk = await globex.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: {
        destinationNumber: '+12125552003',
        agentId: globex.agent.id,
        sipTrunkId: acme.trunk.id,
      },
    });
    expect(viaTrunk.json().error).toBe('sip_trunk_not_found');
  });

  it('lists show only the own company', async () => {
    const trunks = (
      await globex.request({ method: 'GET', url: '/api/v1/phones/sip-trunks' })
    ).json().items as Array<{ id: string }>;
    expect(trunks.map((t) => t.id)).toEqual([globex.trunk.id]);
    const queried = (
      await globex.request({ method: 'POST', url: '/api/v1/phones/sip-trunks/query', payload: {} })
    ).json();
    expect(queried.total).toBe(1);
    const calls = (
      await globex.request({ method: 'POST', url: '/api/v1/phones/calls/query', payload: {} })
    ).json();
    expect(calls.items.every((c: { companyId: string }) => c.companyId === globex.company.id)).toBe(
      true,
    );
  });
});

describe('API keys', () => {
  it('shows the full key once at creation, then only masked with name and times', async () => {
    const created = await acme.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'crm', groups: ['Calls'] },
    });
    expect(created.statusCode).toBe(201);
    const full = created.json().key as string;
    expect(full).toMatch(/^ocg_[A-Za-z0-9_-]{43}$/);
    expect(
      (await acme.request({ method: 'GET', url: '/api/v1/phones/calls/query', key: full }))
        .statusCode,
    ).toBe(404);
    expect(
      (
        await acme.request({
          method: 'POST',
          url: '/api/v1/phones/calls/query',
          key: full,
          payload: {},
        })
      ).statusCode,
    ).toBe(200);

    const listed = (await acme.request({ method: 'GET', url: '/api/v1/api-keys' })).json()
      .items as Array<Record<string, unknown>>;
    const entry = listed.find((k) => k.name === 'crm')!;
    expect(entry).toMatchObject({
      name: 'crm',
      preset: 'custom',
      groups: ['Calls'],
      createdAt: expect.any(String),
    });
    expect(entry.lastUsedAt).toEqual(expect.any(String));
    expect(entry.key).toBe(`${full.slice(0, 6)}…${full.slice(-4)}`);
    const everything =
      JSON.stringify(listed) +
      (await acme.request({ method: 'GET', url: `/api/v1/api-keys/${String(entry.id)}` })).body;
    expect(everything).not.toContain(full);
    expect(everything).not.toContain('keyHash');
  });

  it('edits name, IP and groups but never the secret', async () => {
    const created = (
      await acme.request({
        method: 'POST',
        url: '/api/v1/api-keys',
        payload: { name: 'edit-me', groups: ['Agents'] },
      })
    ).json();
    const patched = await acme.request({
      method: 'PATCH',
      url: `/api/v1/api-keys/${created.id}`,
      payload: { name: 'renamed', groups: ['Calls', 'Agents'], allowedIp: '127.0.0.1' },
    });
    expect(patched.json()).toMatchObject({
      name: 'renamed',
      groups: ['Calls', 'Agents'],
      allowedIp: '127.0.0.1',
    });
    expect(
      (
        await acme.request({
          method: 'PATCH',
          url: `/api/v1/api-keys/${created.id}`,
          payload: { key: 'ocg_new' },
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await acme.request({ method: 'GET', url: '/api/v1/agents', key: created.key })).statusCode,
    ).toBe(200);
  });

  it('keys and companies need a full-access key', async () => {
    const key = acme.addKey({ name: 'ops', groups: ['Calls', 'Agents', 'VoIP & SIP'] });
    expect(
      (
        await acme.request({
          method: 'POST',
          url: '/api/v1/api-keys',
          key,
          payload: { name: 'x', preset: 'full_access' },
        })
      ).statusCode,
    ).toBe(403);
    expect((await acme.request({ method: 'GET', url: '/api/v1/companies', key })).statusCode).toBe(
      403,
    );
  });

  it('a reseller creates a subsidiary and acts for it', async () => {
    const sub = await acme.request({
      method: 'POST',
      url: '/api/v1/companies',
      payload: { name: 'acme-east', plan: { maxConcurrentCalls: 5 } },
    });
    expect(sub.statusCode).toBe(201);
    expect(sub.json()).toMatchObject({
      parentId: acme.company.id,
      plan: { maxConcurrentCalls: 5, allowOutbound: true },
    });
    const agent = await acme.request({
      method: 'POST',
      url: '/api/v1/agents',
      companyId: sub.json().id,
      payload: { name: 'east', websocketUrl: 'wss://agent.example/ws' },
    });
    expect(agent.json().companyId).toBe(sub.json().id);
    const companies = (await acme.request({ method: 'GET', url: '/api/v1/companies' })).json()
      .items as Array<{ id: string }>;
    expect(companies.map((c) => c.id)).toEqual([acme.company.id, sub.json().id]);
  });
});

describe('configuration objects', () => {
  it('never returns a trunk password, and keeps one default trunk', async () => {
    const t = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/sip-trunks',
      payload: {
        name: 'carrier',
        host: 'sip.carrier.example',
        username: 'u',
        password: 's3cret',
        isDefault: true,
        transport: 'tcp',
      },
    });
    expect(t.statusCode).toBe(201);
    expect(t.body).not.toContain('s3cret');
    expect(t.json().hasPassword).toBe(true);
    const first = (
      await acme.request({ method: 'GET', url: `/api/v1/phones/sip-trunks/${acme.trunk.id}` })
    ).json();
    expect(first.isDefault).toBe(false);
  });

  it('bumps the agent version on every change', async () => {
    const res = await acme.request({
      method: 'PATCH',
      url: `/api/v1/agents/${acme.agent.id}`,
      payload: { prompt: 'Be brief.', outgoing: { ringTimeoutSeconds: 20 } },
    });
    expect(res.json()).toMatchObject({
      version: 2,
      prompt: 'Be brief.',
      outgoing: { ringTimeoutSeconds: 20, recordingEnabled: true },
    });
  });

  it('refuses to delete a trunk an outbound route uses', async () => {
    const trunk = (
      await acme.request({
        method: 'POST',
        url: '/api/v1/phones/sip-trunks',
        payload: { name: 'routed', host: '10.0.0.1' },
      })
    ).json();
    const route = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/outbound-routes',
      payload: { prefix: '+49', sipTrunkId: trunk.id },
    });
    expect(route.statusCode).toBe(201);
    expect(
      (await acme.request({ method: 'DELETE', url: `/api/v1/phones/sip-trunks/${trunk.id}` }))
        .statusCode,
    ).toBe(409);
    expect(
      (
        await acme.request({
          method: 'POST',
          url: '/api/v1/phones/outbound-routes',
          payload: { prefix: '+33', sipTrunkId: 'nope' },
        })
      ).statusCode,
    ).toBe(400);
  });

  it('opt-outs: add, read, list, remove', async () => {
    const added = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/opt-outs',
      payload: { phoneNumber: '+12125552999' },
    });
    expect(added.json()).toMatchObject({ phoneNumber: '+12125552999', permanent: true });
    expect(
      (await acme.request({ method: 'GET', url: '/api/v1/phones/opt-outs/%2B12125552999' }))
        .statusCode,
    ).toBe(200);
    expect(
      (await globex.request({ method: 'GET', url: '/api/v1/phones/opt-outs/%2B12125552999' }))
        .statusCode,
    ).toBe(404);
    expect(
      (await acme.request({ method: 'DELETE', url: '/api/v1/phones/opt-outs/%2B12125552999' }))
        .statusCode,
    ).toBe(204);
  });

  it('hangup of a call not yet dialed cancels it; a second hangup is refused', async () => {
    const call = (
      await acme.request({
        method: 'POST',
        url: '/api/v1/phones/calls/initiate-call',
        payload: { destinationNumber: '+12125552100', agentId: acme.agent.id },
      })
    ).json();
    const res = await acme.request({
      method: 'POST',
      url: `/api/v1/phones/calls/${call.callId}/hangup`,
    });
    expect(res.json()).toMatchObject({ status: 'cancelled', endCallReason: 'user_hungup' });
    const again = await acme.request({
      method: 'POST',
      url: `/api/v1/phones/calls/${call.callId}/hangup`,
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('call_not_live');
  });
});

describe('generic HTTP answers', () => {
  it('400 invalid_json for a malformed body', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      headers: { 'content-type': 'application/json' },
      payload: '{"destinationNumber": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_json');
  });

  it('413 body_too_large over the limit', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: { destinationNumber: '+12125551234', contextForAi: 'x'.repeat(5000) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toBe('body_too_large');
  });

  it('415 for a body that is not JSON', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBe(415);
  });

  it('404 not_found for an unknown route', async () => {
    const res = await acme.request({ method: 'GET', url: '/api/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
  });

  it('400 unknown_field on the CRUD routes too', async () => {
    const res = await acme.request({
      method: 'POST',
      url: '/api/v1/agents',
      payload: { name: 'a', websocketUrl: 'ws://x/y', colour: 'red' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'unknown_field',
      reason: expect.stringContaining('colour'),
    });
  });

  it('the OpenAPI document lists every route and every error code', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.info.version).toBe('1.0.0');
    for (const path of [
      '/api/v1/phones/calls/initiate-call',
      '/api/v1/phones/calls/{id}',
      '/api/v1/phones/sip-trunks/query',
      '/api/v1/api-keys',
      '/api/v1/phones/outbound-routes/{id}',
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    for (const code of Object.keys(ERROR_CATALOGUE))
      expect(doc.info.description).toContain(`\`${code}\``);
    expect(doc.components.securitySchemes.apiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
  });
});

describe('rate limit', () => {
  it('answers 429 rate_limit_exceeded per key with Retry-After', async () => {
    const limited = await startTestGateway({ rateLimitMax: 3 });
    try {
      const t = await limited.tenant('busy');
      const other = t.addKey({ name: 'second', fullAccess: true });
      for (let i = 0; i < 3; i++) await t.request({ method: 'GET', url: '/api/v1/agents' });
      const res = await t.request({ method: 'GET', url: '/api/v1/agents' });
      expect(res.statusCode).toBe(429);
      expect(res.json().error).toBe('rate_limit_exceeded');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(
        (await t.request({ method: 'GET', url: '/api/v1/agents', key: other })).statusCode,
      ).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('unexpected errors', () => {
  it('answer 500 internal_error without details', async () => {
    const broken = await startTestGateway({
      dispatcher: {
        accepted: () => {
          throw new Error('dialer exploded at 0xdeadbeef');
        },
        hangup: async () => undefined,
      },
    });
    try {
      const t = await broken.tenant('broken');
      const res = await t.request({
        method: 'POST',
        url: '/api/v1/phones/calls/initiate-call',
        payload: { destinationNumber: '+12125553001', agentId: t.agent.id },
      });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'internal_error', reason: expect.any(String) });
      expect(res.body).not.toContain('deadbeef');
    } finally {
      await broken.close();
    }
  });
});
