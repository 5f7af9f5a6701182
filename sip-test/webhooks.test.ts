// Issue 25: call events pushed to a real HTTP receiver on loopback that
// verifies every signature with the `standardwebhooks` library. The daemon
// runs as the README starts it, with loopback allowed as a webhook
// destination (webhooks.allowedNetworks) and http allowed, and a short retry
// base so retries come within the test.
//
//   an answered call: accepted, ringing, answered, ended, once each, in order;
//   a busy call retried then answered: accepted, retry_scheduled, ringing,
//     answered, ended;
//   a scheduled call: accepted, scheduled, ringing, answered, ended;
//   the receiver answering 500 three times: the event arrives on the fourth
//     try with the same id;
//   the receiver down across a kill -9 of the daemon: after the restart every
//     event arrives, ids unique;
//   a name that resolves to loopback, not allowed: refused at delivery time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocatePort } from './runner/sipp-runner.js';
import { FarEnds } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';
import { restartGateway } from './support/restart-gateway.js';
import { SipResponder } from './support/sip-responder.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const ENV = {
  GATEWAY_WEBHOOKS_ALLOW_HTTP: 'true',
  GATEWAY_WEBHOOKS_ALLOWED_NETWORKS: '127.0.0.0/8',
  GATEWAY_WEBHOOKS_RETRY_BASE_MS: '200',
  GATEWAY_WEBHOOKS_POLL_INTERVAL_MS: '50',
  GATEWAY_SCHEDULER_POLL_MS: '100',
  GATEWAY_RETRY_DELAY_UNIT_MS: '100',
  GATEWAY_RTP_INACTIVITY_SECONDS: '0',
  GATEWAY_RATE_LIMIT_MAX: '100000',
};

const farEnds = new FarEnds();
const receivers: WebhookReceiver[] = [];
const responders: SipResponder[] = [];
let gw: Gateway;
const extraGateways: Gateway[] = [];

beforeAll(async () => {
  gw = await startGateway(ENV);
}, 30_000);
afterAll(async () => {
  farEnds.killAll();
  for (const r of responders) r.close();
  for (const r of receivers) await r.stop();
  for (const g of extraGateways) await g.daemon.stop('SIGKILL');
  await gw?.stop();
});

/** A receiver and an endpoint for it (all event types unless given). */
async function subscribed(on: Gateway = gw, eventTypes?: string[]): Promise<WebhookReceiver> {
  const receiver = await WebhookReceiver.listen();
  receivers.push(receiver);
  const res = await on.api('POST', '/api/v1/webhooks', {
    url: receiver.url,
    ...(eventTypes ? { eventTypes } : {}),
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  receiver.secret = res.json.secret;
  return receiver;
}

async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The event types one call's accepted deliveries carried, in arrival order. */
const typesFor = (r: WebhookReceiver, callId: string) => r.deliveredFor(callId).map((e) => e.type);

/** Hangs up once the call is in_call; answers its final record. */
async function hangUpWhenAnswered(on: Gateway, callId: string) {
  await on.waitFor(callId, 'in_call', 20_000);
  await on.api('POST', `/api/v1/phones/calls/${callId}/hangup`);
  return on.waitFor(callId, undefined, 20_000);
}

describe('webhooks to a real receiver that verifies Standard Webhooks signatures', () => {
  it("an answered call: accepted, ringing, answered, recording_ready, ended once each, in order, signed; the last one carries the final record with the agent's summary", async () => {
    const receiver = await subscribed();
    const sipp = await farEnds.start('uas-180-200.xml', { timeoutSec: 20 });
    const sessions = gw.agentServer.sessions.length;
    const callId = await gw.call(await gw.trunk(sipp.port), '+12125556100');
    const agent = await gw.agentServer.session(sessions);
    // The agent's summary comes after `stop`, in the grace period.
    void agent
      .waitForEvent('stop', 20_000)
      .then(() => agent.send({ event: 'result', result: { summary: 'Booked a visit on Friday' } }));
    await hangUpWhenAnswered(gw, callId);
    await until(() => typesFor(receiver, callId).includes('call.ended'), 10_000, 'call.ended');
    await new Promise((r) => setTimeout(r, 2500)); // past the agent's grace: nothing more may come
    const final = await gw.get(callId);
    expect(final.summary).toBe('Booked a visit on Friday');
    const got = receiver.deliveredFor(callId);
    const types = got.map((e) => e.type);
    // The summary is in call.ended when it came before the final write, else in call.analysis_completed.
    expect(types.slice(0, 5)).toEqual([
      'call.accepted',
      'call.ringing',
      'call.answered',
      'call.recording_ready',
      'call.ended',
    ]);
    expect(types.slice(5)).toEqual(
      got[4]!.body.data.call && (got[4]!.body.data.call as { summary?: string }).summary
        ? []
        : ['call.analysis_completed'],
    );
    expect(got.every((e) => e.verified)).toBe(true);
    expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
    for (const e of got) expect(e.body.id).toBe(e.id);
    expect(got[4]!.body).toMatchObject({ type: 'call.ended', callId, companyId: final.companyId });
    expect(got.at(-1)!.body.data.call).toEqual(final);
    expect((await sipp.done).code).toBe(0);
  }, 40_000);

  it('a busy call retried, then answered: accepted, retry_scheduled, ringing, answered, ended', async () => {
    const receiver = await subscribed(gw, [
      'call.accepted',
      'call.retry_scheduled',
      'call.ringing',
      'call.answered',
      'call.ended',
    ]);
    const far = await SipResponder.start((i) =>
      i.index === 0 ? { kind: 'reject', code: 486, reason: 'Busy Here' } : { kind: 'answer' },
    );
    responders.push(far);
    const callId = await gw.call(await gw.trunk(far.port), '+12125556101', {
      maxRetries: 2, // rounds in all: one retry
      retryDelayMinutes: 30,
    });
    await hangUpWhenAnswered(gw, callId);
    await until(() => typesFor(receiver, callId).includes('call.ended'), 10_000, 'call.ended');
    const got = receiver.deliveredFor(callId);
    expect(got.map((e) => e.type)).toEqual([
      'call.accepted',
      'call.retry_scheduled',
      'call.ringing',
      'call.answered',
      'call.ended',
    ]);
    expect(got.every((e) => e.verified)).toBe(true);
    expect(got[1]!.body.data).toMatchObject({ reason: 'retry', scheduleTime: expect.any(String) });
  }, 40_000);

  it('a scheduled call: accepted, scheduled (its time), ringing, answered, ended', async () => {
    const receiver = await subscribed(gw, [
      'call.accepted',
      'call.scheduled',
      'call.ringing',
      'call.answered',
      'call.ended',
    ]);
    const sipp = await farEnds.start('uas-180-200.xml', { timeoutSec: 20 });
    const due = new Date(Date.now() + 1500).toISOString();
    const callId = await gw.call(await gw.trunk(sipp.port), '+12125556102', { scheduledAt: due });
    await hangUpWhenAnswered(gw, callId);
    await until(() => typesFor(receiver, callId).includes('call.ended'), 10_000, 'call.ended');
    const got = receiver.deliveredFor(callId);
    expect(got.map((e) => e.type)).toEqual([
      'call.accepted',
      'call.scheduled',
      'call.ringing',
      'call.answered',
      'call.ended',
    ]);
    expect(got[1]!.body.data).toMatchObject({ reason: 'initial' });
    expect(Date.parse(got[1]!.body.data.scheduleTime as string)).toBe(Date.parse(due));
    expect(got.every((e) => e.verified)).toBe(true);
  }, 40_000);

  it('the receiver answers 500 three times: the event arrives on the fourth try, same id; the deliveries API shows the attempts', async () => {
    const receiver = await subscribed(gw, ['call.accepted']);
    receiver.answer = (n) => (n < 3 ? 500 : 200);
    const far = await SipResponder.start(() => ({ kind: 'reject', code: 603, reason: 'Decline' }));
    responders.push(far);
    const callId = await gw.call(await gw.trunk(far.port), '+12125556103');
    await until(() => receiver.received.length >= 4, 20_000, 'four tries');
    expect(receiver.received.map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
    expect(receiver.received.every((r) => r.verified && r.callId === callId)).toBe(true);
    const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
    // Back-off from a 200 ms base, doubling, ±20 %.
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
    const list = await gw.api('GET', '/api/v1/webhooks');
    const endpoint = list.json.items.find((e: { url: string }) => e.url === receiver.url);
    const deliveries = await gw.api('GET', `/api/v1/webhooks/${endpoint.id}/deliveries`);
    expect(deliveries.json.items).toEqual([
      expect.objectContaining({
        eventId: receiver.received[0]!.id,
        eventType: 'call.accepted',
        callId,
        status: 'delivered',
        attempts: 4,
        lastResponseCode: 200,
        nextAttemptAt: null,
      }),
    ]);
    // A manual retry sends it once more, same id.
    const again = await gw.api(
      'POST',
      `/api/v1/webhooks/${endpoint.id}/deliveries/${deliveries.json.items[0].id}/retry`,
    );
    expect(again.status).toBe(200);
    await until(() => receiver.received.length === 5, 5000, 'the manual retry');
    expect(receiver.received[4]!.id).toBe(receiver.received[0]!.id);
    const metrics = await fetch(`${gw.daemon.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/gateway_webhook_deliveries_total\{result="retry"\} [1-9]/);
    expect(metrics).toMatch(/gateway_webhook_deliveries_total\{result="delivered"\} [1-9]/);
    expect(metrics).toMatch(/gateway_webhook_queue_depth \d+/);
    expect(metrics).toMatch(/gateway_webhook_oldest_pending_age_seconds \d/);
  }, 40_000);

  it('the receiver down across a kill -9 of the daemon: after the restart every event arrives, ids unique', async () => {
    const port = await allocatePort();
    const env = { ...ENV, GATEWAY_SIP_PORT: String(await allocatePort()) };
    const first = await startGateway(env);
    extraGateways.push(first);
    const receiver = await WebhookReceiver.listen(port);
    receivers.push(receiver);
    const created = await first.api('POST', '/api/v1/webhooks', { url: receiver.url });
    receiver.secret = created.json.secret;
    await receiver.stop();
    const far = await SipResponder.start(() => ({
      kind: 'reject',
      code: 486,
      reason: 'Busy Here',
    }));
    responders.push(far);
    const trunk = await first.trunk(far.port);
    const callIds: string[] = [];
    for (let i = 0; i < 3; i++) callIds.push(await first.call(trunk, `+1212555620${i}`));
    for (const id of callIds) await first.waitFor(id, 'busy', 20_000);
    await first.daemon.stop('SIGKILL');
    const again = await restartGateway(first, env);
    extraGateways.push(again);
    await receiver.start();
    // Each call: accepted, ended.
    await until(() => receiver.received.length >= 6, 20_000, 'six events after the restart');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(6);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(6);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    for (const id of callIds)
      expect(typesFor(receiver, id)).toEqual(['call.accepted', 'call.ended']);
  }, 60_000);

  it('refused destinations: 127.0.0.1 and 169.254.169.254 at creation unless allowed; a name resolving to loopback at delivery time', async () => {
    // This daemon allows 127.0.0.0/8: loopback passes, the metadata address never does.
    const metadata = await gw.api('POST', '/api/v1/webhooks', { url: 'http://169.254.169.254/x' });
    expect(metadata.status).toBe(400);
    expect(metadata.json).toMatchObject({ error: 'invalid_webhook_url' });
    expect(metadata.json.reason).toContain('linkLocal');
    const strict = await startGateway({ ...ENV, GATEWAY_WEBHOOKS_ALLOWED_NETWORKS: '' });
    extraGateways.push(strict);
    const loop = await strict.api('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/x' });
    expect(loop.status).toBe(400);
    expect(loop.json.reason).toContain('loopback');
    const mapped = await strict.api('POST', '/api/v1/webhooks', {
      url: 'http://[::ffff:127.0.0.1]:9/x',
    });
    expect(mapped.status).toBe(400);
    // A name is judged where it resolves, at each connection (DNS rebinding).
    const receiver = await WebhookReceiver.listen();
    receivers.push(receiver);
    const byName = await strict.api('POST', '/api/v1/webhooks', {
      url: `http://localhost:${receiver.port}/hooks`,
      eventTypes: ['call.accepted'],
    });
    expect(byName.status).toBe(201);
    const far = await SipResponder.start(() => ({
      kind: 'reject',
      code: 486,
      reason: 'Busy Here',
    }));
    responders.push(far);
    await strict.call(await strict.trunk(far.port), '+12125556300');
    let items: Array<{ status: string; lastError: string | null }> = [];
    await until(() => items[0]?.status === 'failed', 10_000, 'the delivery to fail').catch(
      () => undefined,
    );
    for (let i = 0; i < 100 && items[0]?.status !== 'failed'; i++) {
      items = (await strict.api('GET', `/api/v1/webhooks/${byName.json.id}/deliveries`)).json.items;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(items[0]).toMatchObject({ status: 'failed', attempts: 1, lastResponseCode: 0 });
    expect(items[0]!.lastError).toContain('destination refused');
    expect(receiver.received).toHaveLength(0);
  }, 60_000);
});
