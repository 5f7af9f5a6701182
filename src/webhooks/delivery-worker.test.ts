// The delivery worker over the real outbox (SQLite in memory), a scripted
// receiver and fake timers: what it signs, what it retries and when, what it
// gives up on, and how many it keeps in flight.
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { realTimers } from '../calls/timers.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import { openDatabase } from '../store/database.js';
import { createStore, type Store } from '../store/store.js';
import { DeliveryWorker } from './delivery-worker.js';
import { DestinationRefused, type WebhookResponse } from './webhook-sender.js';
import { newWebhookSecret } from './webhook-signer.js';

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string;
  resolve: (r: WebhookResponse) => void;
  reject: (e: Error) => void;
}

let store: Store;
let clock: ManualClock;
let sent: Sent[];
let companyId: string;
let secret: string;
let calls = 0;

const T0 = Date.UTC(2026, 5, 10, 15, 0, 0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0); // the verifier checks the timestamp against Date.now()
  clock = new ManualClock(T0);
  store = createStore(openDatabase(':memory:'));
  companyId = new AccountService(store, clock).createCompany('acme').id;
  secret = newWebhookSecret();
  const at = new Date(T0).toISOString();
  store.webhooks.insertEndpoint(
    {
      id: 'e1',
      companyId,
      url: 'https://hooks.example.com/in',
      eventTypes: ['call.accepted'],
      enabled: true,
      description: null,
      createdAt: at,
      modifiedAt: at,
    },
    secret,
  );
  sent = [];
});
afterEach(() => vi.useRealTimers());

function worker(
  concurrency = 4,
  durable: () => Promise<void> = () => Promise.resolve(),
): DeliveryWorker {
  return new DeliveryWorker(
    store.webhooks,
    clock,
    realTimers,
    pino({ level: 'silent' }),
    {
      pollIntervalMs: 100,
      concurrency,
      retryWindowMs: 3_600_000,
      retryBaseMs: 1000,
      retentionMs: 86_400_000,
    },
    (url, headers, body) =>
      new Promise((resolve, reject) => sent.push({ url, headers, body, resolve, reject })),
    durable,
  );
}

function newCall(): string {
  const id = `c${++calls}`;
  store.calls.insert(
    callRecordFixture({
      id,
      companyId,
      phoneNumber: '+12125551234',
      status: 'to_be_processed',
      createdAt: new Date(clock.now()).toISOString(),
      modifiedAt: new Date(clock.now()).toISOString(),
    }),
  );
  return id;
}

const delivery = () => store.webhooks.deliveries('e1', 10)[0]!;
const settle = () => vi.advanceTimersByTimeAsync(0);

describe('DeliveryWorker', () => {
  it('signs the body the Standard Webhooks way; a 2xx marks it delivered', async () => {
    const w = worker();
    newCall();
    w.start();
    await settle(); // the outbox is on disk first
    expect(sent).toHaveLength(1);
    const s = sent[0]!;
    expect(s.url).toBe('https://hooks.example.com/in');
    expect(() => new Webhook(secret).verify(s.body, s.headers)).not.toThrow();
    expect(s.headers['webhook-id']).toBe(JSON.parse(s.body).id);
    expect(s.headers['webhook-timestamp']).toBe(String(T0 / 1000));
    s.resolve({ status: 204, retryAfter: null });
    await settle();
    expect(delivery()).toMatchObject({ status: 'delivered', attempts: 1, lastResponseCode: 204 });
    expect(w.results).toEqual({ delivered: 1, retry: 0, failed: 0 });
    await w.stop();
  });

  it('503 with Retry-After 30: tried again 30 s later, not before; 404: failed for good', async () => {
    const w = worker();
    newCall();
    w.start();
    await settle(); // the outbox is on disk first
    sent[0]!.resolve({ status: 503, retryAfter: '30' });
    await settle();
    expect(delivery()).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastResponseCode: 503,
      nextAttemptAt: new Date(T0 + 30_000).toISOString(),
    });
    clock.advance(29_000);
    await vi.advanceTimersByTimeAsync(200);
    expect(sent).toHaveLength(1);
    clock.advance(1000);
    await vi.advanceTimersByTimeAsync(200);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.headers['webhook-id']).toBe(sent[0]!.headers['webhook-id']);
    sent[1]!.resolve({ status: 404, retryAfter: null });
    await settle();
    expect(delivery()).toMatchObject({ status: 'failed', attempts: 2, lastError: 'HTTP 404' });
    clock.advance(3_600_000);
    await vi.advanceTimersByTimeAsync(200);
    expect(sent).toHaveLength(2);
    await w.stop();
  });

  it('network errors are retried until the window from the event closes; a refused destination is not retried', async () => {
    const w = worker();
    newCall();
    w.start();
    await settle(); // the outbox is on disk first
    let n = 0;
    while (delivery().status === 'pending' && n < 50) {
      sent
        .at(-1)!
        .reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      await settle();
      const next = delivery().nextAttemptAt;
      if (next) clock.set(Date.parse(next));
      await vi.advanceTimersByTimeAsync(200);
      n++;
    }
    expect(delivery()).toMatchObject({ status: 'failed', lastResponseCode: 0 });
    expect(delivery().lastError).toContain('retry window closed');
    expect(clock.now() - T0).toBeLessThanOrEqual(3_600_000);
    expect(n).toBeGreaterThan(5);

    newCall();
    await vi.advanceTimersByTimeAsync(200);
    sent.at(-1)!.reject(new DestinationRefused('destination refused: a loopback address'));
    await settle();
    expect(delivery()).toMatchObject({ status: 'failed', attempts: 1 });
    expect(delivery().lastError).toContain('destination refused');
    await w.stop();
  });

  it('sends an event only once the outbox is on disk; a failed fsync is tried again later', async () => {
    let fsync!: { resolve: () => void; reject: (e: Error) => void };
    const w = worker(4, () => new Promise((resolve, reject) => (fsync = { resolve, reject })));
    newCall();
    w.start();
    await settle();
    expect(sent).toHaveLength(0);
    fsync.reject(new Error('EIO'));
    await settle();
    expect(sent).toHaveLength(0);
    expect(delivery()).toMatchObject({ status: 'pending', attempts: 1, lastError: 'EIO' });
    clock.set(Date.parse(delivery().nextAttemptAt!));
    await vi.advanceTimersByTimeAsync(200);
    fsync.resolve();
    await settle();
    expect(sent).toHaveLength(1);
    sent[0]!.resolve({ status: 200, retryAfter: null });
    await settle();
    expect(delivery()).toMatchObject({ status: 'delivered', attempts: 2 });
    await w.stop();
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const w = worker(2);
    for (let i = 0; i < 5; i++) newCall();
    w.start();
    await settle(); // the outbox is on disk first
    expect(sent).toHaveLength(2);
    expect(w.inFlightCount).toBe(2);
    sent[0]!.resolve({ status: 200, retryAfter: null });
    await settle();
    expect(sent).toHaveLength(3);
    for (const s of sent.slice(1)) s.resolve({ status: 200, retryAfter: null });
    await settle();
    for (const s of sent.slice(3)) s.resolve({ status: 200, retryAfter: null });
    await settle();
    expect(sent).toHaveLength(5);
    expect(w.results.delivered).toBe(5);
    await w.stop();
  });

  it('after a rotation both secrets sign until the overlap ends', async () => {
    const w = worker();
    const next = newWebhookSecret();
    store.webhooks.rotateSecret('e1', next, new Date(T0 + 60_000).toISOString(), 'x');
    newCall();
    w.start();
    await settle(); // the outbox is on disk first
    const s = sent[0]!;
    expect(s.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(secret).verify(s.body, s.headers)).not.toThrow();
    expect(() => new Webhook(next).verify(s.body, s.headers)).not.toThrow();
    s.resolve({ status: 200, retryAfter: null });
    await settle();
    clock.advance(61_000);
    newCall();
    await vi.advanceTimersByTimeAsync(200);
    expect(sent[1]!.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(() => new Webhook(next).verify(sent[1]!.body, sent[1]!.headers)).not.toThrow();
    sent[1]!.resolve({ status: 200, retryAfter: null });
    await settle();
    await w.stop();
  });
});
