// /api/v1/webhooks over app.inject: the secret shown once (and at rotation),
// the URL rules, PATCH and DELETE, deliveries and retry, another company's
// endpoints out of reach, and the Workflows operation group.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../model/webhook.js';
import { startTestGateway, type Tenant, type TestGateway } from '../test-support/test-gateway.js';

let gw: TestGateway;
let acme: Tenant;

beforeEach(async () => {
  gw = await startTestGateway({ webhooks: { allowHttp: false, allowedNetworks: ['10.0.0.0/8'] } });
  acme = await gw.tenant('acme');
});
afterEach(() => gw.close());

const create = (payload: Record<string, unknown>, t: Tenant = acme) =>
  t.request({ method: 'POST', url: '/api/v1/webhooks', payload });

describe('/api/v1/webhooks', () => {
  it('creates an endpoint and shows its secret once; lists, gets, patches and deletes it', async () => {
    const res = await create({
      url: 'https://hooks.example.com/calls',
      eventTypes: ['call.ended', 'call.answered'],
      description: 'CRM',
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/calls',
      eventTypes: ['call.ended', 'call.answered'],
      enabled: true,
      description: 'CRM',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const got = await acme.request({ method: 'GET', url: `/api/v1/webhooks/${created.id}` });
    expect(got.json()).not.toHaveProperty('secret');
    const list = await acme.request({ method: 'GET', url: '/api/v1/webhooks' });
    expect(list.json().items.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect(JSON.stringify(list.json())).not.toContain(created.secret);
    const patched = await acme.request({
      method: 'PATCH',
      url: `/api/v1/webhooks/${created.id}`,
      payload: { enabled: false, eventTypes: [] },
    });
    expect(patched.json()).toMatchObject({ enabled: false, eventTypes: [] });
    const rotated = await acme.request({
      method: 'POST',
      url: `/api/v1/webhooks/${created.id}/rotate-secret`,
    });
    expect(rotated.json()).toEqual({
      secret: expect.stringMatching(/^whsec_/),
      previousSecretExpiresAt: new Date(gw.clock.now() + 3_600_000).toISOString(),
    });
    expect(rotated.json().secret).not.toBe(created.secret);
    const deleted = await acme.request({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}` });
    expect(deleted.statusCode).toBe(204);
    const gone = await acme.request({ method: 'GET', url: `/api/v1/webhooks/${created.id}` });
    expect(gone.statusCode).toBe(404);
  });

  it.each([
    ['http when not allowed', 'http://hooks.example.com/x', 'https'],
    ['a loopback literal', 'https://127.0.0.1/x', 'loopback'],
    ['the metadata address', 'https://169.254.169.254/latest', 'linkLocal'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.1.1]/x', 'private'],
    ['credentials in the URL', 'https://user:pw@hooks.example.com/x', 'credentials'],
    ['not a URL', 'hooks', 'absolute'],
  ])('400 invalid_webhook_url for %s', async (_label, url, words) => {
    const res = await create({ url });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_webhook_url' });
    expect(res.json().reason).toContain(words);
  });

  it('an allowed network passes; unknown event types and fields are 400s', async () => {
    expect((await create({ url: 'https://10.1.2.3/x' })).statusCode).toBe(201);
    const bad = await create({ url: 'https://hooks.example.com/x', eventTypes: ['call.exploded'] });
    expect(bad.statusCode).toBe(400);
    const extra = await create({ url: 'https://hooks.example.com/x', secret: 'mine' });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().error).toBe('unknown_field');
  });

  it("another company's endpoint is a 404 everywhere; a key without Workflows is a 403", async () => {
    const id = (await create({ url: 'https://hooks.example.com/x' })).json().id;
    const other = await gw.tenant('other');
    for (const [method, url] of [
      ['GET', `/api/v1/webhooks/${id}`],
      ['PATCH', `/api/v1/webhooks/${id}`],
      ['DELETE', `/api/v1/webhooks/${id}`],
      ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
      ['GET', `/api/v1/webhooks/${id}/deliveries`],
      ['POST', `/api/v1/webhooks/${id}/deliveries/1/retry`],
    ] as const) {
      const res = await other.request({
        method,
        url,
        ...(method === 'PATCH' ? { payload: { enabled: false } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const callsOnly = acme.addKey({ name: 'calls', groups: ['Calls'] });
    const res = await acme.request({ method: 'GET', url: '/api/v1/webhooks', key: callsOnly });
    expect(res.statusCode).toBe(403);
  });

  it('deliveries list what the outbox holds for the endpoint; retry sends one again; an unknown delivery is a 404', async () => {
    const id = (await create({ url: 'https://hooks.example.com/x' })).json().id;
    await acme.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: { destinationNumber: '+12125551234', agentId: acme.agent.id },
    });
    const list = await acme.request({ method: 'GET', url: `/api/v1/webhooks/${id}/deliveries` });
    expect(list.json().items).toEqual([
      expect.objectContaining({ eventType: 'call.accepted', status: 'pending', attempts: 0 }),
    ]);
    const deliveryId = list.json().items[0].id;
    const retried = await acme.request({
      method: 'POST',
      url: `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`,
    });
    expect(retried.json()).toMatchObject({ id: deliveryId, status: 'pending' });
    const none = await acme.request({
      method: 'POST',
      url: `/api/v1/webhooks/${id}/deliveries/999/retry`,
    });
    expect(none.statusCode).toBe(404);
  });

  it('the OpenAPI 3.1 document has a webhooks section: each event type, its signed headers and body', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    const ended = doc.webhooks['call.ended'].post;
    expect(ended.parameters.map((p: { name: string }) => p.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    const body = ended.requestBody.content['application/json'].schema;
    expect(body.properties.type.const).toBe('call.ended');
    expect(Object.keys(body.properties)).toEqual([
      'id',
      'type',
      'timestamp',
      'companyId',
      'callId',
      'data',
    ]);
    expect(doc.paths['/api/v1/webhooks/{id}/rotate-secret']).toBeDefined();
  });
});
