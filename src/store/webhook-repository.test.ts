// The outbox in SQLite: events written in the transaction of the call's
// change (and gone with it when it rolls back), one delivery per subscribed
// enabled endpoint, a call's deliveries handed out in order, outcomes,
// manual retry, deletion and pruning.
import { describe, expect, it } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import type { WebhookEventType } from '../model/webhook.js';
import { openDatabase } from './database.js';
import { createStore } from './store.js';

const T0 = '2026-06-10T15:00:00.000Z';
const ms = (iso: string) => Date.parse(iso);

function world() {
  const store = createStore(openDatabase(':memory:'));
  const company = new AccountService(store, new ManualClock()).createCompany('acme');
  const endpoint = (id: string, eventTypes: WebhookEventType[] = [], enabled = true) =>
    store.webhooks.insertEndpoint(
      {
        id,
        companyId: company.id,
        url: `https://hooks.example.com/${id}`,
        eventTypes,
        enabled,
        description: null,
        createdAt: T0,
        modifiedAt: T0,
      },
      `whsec_${Buffer.from(id.padEnd(24, 'x')).toString('base64')}`,
    );
  const call = (id: string) =>
    store.calls.insert(
      callRecordFixture({
        id,
        companyId: company.id,
        phoneNumber: '+12125551234',
        status: 'to_be_processed',
        createdAt: T0,
        modifiedAt: T0,
      }),
    );
  const types = (endpointId: string) =>
    store.webhooks
      .deliveries(endpointId, 100)
      .map((d) => d.eventType)
      .reverse();
  return { store, company, endpoint, call, types };
}

describe('the webhook outbox', () => {
  it('writes one delivery per enabled endpoint that subscribes to the type, with the change', () => {
    const w = world();
    w.endpoint('all');
    w.endpoint('ended-only', ['call.ended']);
    w.endpoint('off', [], false);
    w.call('c1');
    w.store.calls.update('c1', { status: 'trying' }, '2026-06-10T15:00:01.000Z');
    w.store.calls.update('c1', { status: 'ringing' }, '2026-06-10T15:00:02.000Z');
    w.store.calls.update('c1', { status: 'busy' }, '2026-06-10T15:00:03.000Z');
    expect(w.types('all')).toEqual(['call.accepted', 'call.ringing', 'call.ended']);
    expect(w.types('ended-only')).toEqual(['call.ended']);
    expect(w.types('off')).toEqual([]);
  });

  it('a change that rolls back leaves no event behind', () => {
    const w = world();
    w.endpoint('all');
    w.call('c1');
    expect(() =>
      w.store.unitOfWork.run(() => {
        w.store.calls.update('c1', { status: 'ringing' }, '2026-06-10T15:00:01.000Z');
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(w.types('all')).toEqual(['call.accepted']);
  });

  it("hands out a call's deliveries one at a time, in order; other calls' alongside", () => {
    const w = world();
    w.endpoint('e');
    w.call('c1');
    w.store.calls.update('c1', { status: 'ringing' }, '2026-06-10T15:00:01.000Z');
    w.call('c2');
    const now = ms('2026-06-10T15:00:05.000Z');
    const first = w.store.webhooks.due(now, 10);
    expect(first.map((d) => JSON.parse(d.body).type)).toEqual(['call.accepted', 'call.accepted']);
    const [c1] = first;
    // Retried later: the call's next event waits for it.
    w.store.webhooks.markRetry(c1!.id, 503, 'HTTP 503', now + 60_000);
    expect(w.store.webhooks.due(now, 10).map((d) => d.id)).toEqual([first[1]!.id]);
    w.store.webhooks.markDelivered(c1!.id, 200, '2026-06-10T15:00:06.000Z');
    // Oldest due first: c2's accepted (written first), then c1's ringing.
    expect(w.store.webhooks.due(now, 10).map((d) => JSON.parse(d.body).type)).toEqual([
      'call.accepted',
      'call.ringing',
    ]);
    // A failed one no longer holds the call's next events back.
    const ringing = w.store.webhooks.due(now, 10)[1]!;
    w.store.webhooks.markFailed(ringing.id, 410, 'HTTP 410');
    expect(w.store.webhooks.deliveries('e', 10).find((d) => d.id === ringing.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastResponseCode: 410,
      nextAttemptAt: null,
    });
  });

  it('a disabled endpoint is passed over until enabled again; a deleted one takes its deliveries with it', () => {
    const w = world();
    w.endpoint('e');
    w.call('c1');
    const now = ms('2026-06-10T15:00:05.000Z');
    w.store.webhooks.updateEndpoint('e', { enabled: false }, T0);
    expect(w.store.webhooks.due(now, 10)).toEqual([]);
    w.store.webhooks.updateEndpoint('e', { enabled: true }, T0);
    expect(w.store.webhooks.due(now, 10)).toHaveLength(1);
    expect(w.store.webhooks.backlog(now)).toEqual({ pending: 1, oldestAgeSeconds: 5 });
    w.store.webhooks.removeEndpoint('e');
    expect(w.store.webhooks.due(now, 10)).toEqual([]);
    expect(w.store.webhooks.backlog(now).pending).toBe(0);
  });

  it('a manual retry sends a delivered one again; pruning keeps what is pending', () => {
    const w = world();
    w.endpoint('e');
    w.call('c1');
    w.call('c2');
    const now = ms('2026-06-10T15:00:05.000Z');
    const [a, b] = w.store.webhooks.due(now, 10);
    w.store.webhooks.markDelivered(a!.id, 204, '2026-06-10T15:00:06.000Z');
    w.store.webhooks.retryNow(a!.id, now + 1000);
    expect(w.store.webhooks.due(now + 1000, 10).map((d) => d.id)).toEqual([b!.id, a!.id]);
    w.store.webhooks.markDelivered(a!.id, 200, '2026-06-10T15:00:07.000Z');
    expect(w.store.webhooks.prune('2026-06-11T00:00:00.000Z')).toEqual({
      deliveries: 1,
      events: 1,
    });
    expect(w.store.webhooks.deliveries('e', 10).map((d) => d.id)).toEqual([b!.id]);
    expect(w.store.webhooks.delivery('e', 'x; DROP')).toBeUndefined();
  });
});
