// Load shedding over app.inject(): the in-flight cap on initiate-call, the
// pressure gate (heap threshold) sparing the public routes, and refusals
// logged as one count per second.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RefusalCounter } from './load-shedding.js';
import { startTestGateway, type TestGateway } from './test-support/test-gateway.js';

let gw: TestGateway | undefined;

/** initiate-call for +1 212 555 <n>, whenever the calling hours are. */
function initiateCall(tenant: Awaited<ReturnType<TestGateway['tenant']>>, n: number) {
  return tenant.request({
    method: 'POST',
    url: '/api/v1/phones/calls/initiate-call',
    payload: {
      destinationNumber: `+1212555${String(n)}`,
      agentId: tenant.agent.id,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
    },
  });
}
afterEach(async () => {
  await gw?.close();
  gw = undefined;
  vi.useRealTimers();
});

describe('initiate-call in-flight cap', () => {
  it('refuses the requests beyond the cap at once with 503 and Retry-After, and takes calls again when they are done', async () => {
    gw = await startTestGateway({ shedding: { maxCallRequestsInFlight: 2 } });
    const acme = await gw.tenant('acme');
    const call = (i: number) => initiateCall(acme, 3000 + i);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i)));
    const refused = answers.filter((a) => a.statusCode === 503);
    const accepted = answers.filter((a) => a.statusCode === 200);
    expect(accepted.length).toBe(2);
    expect(refused.length).toBe(10);
    for (const r of refused) {
      expect(r.json()).toEqual({
        error: 'server_unavailable',
        reason: expect.stringMatching(/2 calls are being placed/),
      });
      expect(r.headers['retry-after']).toBe('2');
    }
    // the slots are free again once answered, refused ones included
    expect((await call(20)).statusCode).toBe(200);
    expect((await call(21)).statusCode).toBe(200);
  });

  it('a request that only waits for its commit to be durable holds no place', async () => {
    gw = await startTestGateway({ shedding: { maxCallRequestsInFlight: 1 } });
    const acme = await gw.tenant('acme');
    const uow = gw.store.unitOfWork;
    const runDurable = uow.runDurable.bind(uow);
    let fsynced!: () => void;
    const disk = new Promise<void>((r) => (fsynced = r));
    // every admission's commit waits for one slow fsync
    let decided = 0;
    uow.runDurable = async (fn, keys, onRan) => {
      const value = await runDurable(fn, keys, () => {
        decided++;
        onRan?.();
      });
      await disk;
      return value;
    };
    const call = (i: number) => initiateCall(acme, 4000 + i);
    // each one is sent once the one before is decided and only waits for the disk
    const pending = [];
    for (let i = 0; i < 3; i++) {
      pending.push(call(i));
      // bounded in time, not in turns: a loaded machine takes many turns to decide
      const until = Date.now() + 5_000;
      while (decided <= i && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
    }
    fsynced();
    const answers = Promise.all(pending);
    expect((await answers).map((a) => a.statusCode)).toEqual([200, 200, 200]);
  });
});

describe('pressure gate', () => {
  it('over the heap threshold, API routes get 503 server_unavailable; /healthz, /readyz and /metrics still answer', async () => {
    gw = await startTestGateway({ shedding: { maxHeapUsedMb: 1, overloadRetryAfterSeconds: 7 } });
    const acme = await gw.tenant('acme');
    await new Promise((r) => setTimeout(r, 300)); // a sample or two
    const res = await acme.request({ method: 'GET', url: '/api/v1/agents' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      error: 'server_unavailable',
      reason: expect.stringContaining('overloaded (heapUsedBytes)'),
    });
    expect(res.headers['retry-after']).toBe('7');
    for (const url of ['/healthz', '/readyz', '/metrics'])
      expect((await gw.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
  });
});

describe('RefusalCounter', () => {
  it('logs a burst of refusals as one count after a second, and nothing when there were none', () => {
    vi.useFakeTimers();
    const lines: Array<[object, string]> = [];
    const counter = new RefusalCounter({ info: (o, m) => lines.push([o, m]) });
    for (let i = 0; i < 184; i++) counter.note();
    expect(lines).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(lines).toEqual([[{ refused: 184, periodMs: 1000 }, 'requests refused with 503']]);
    vi.advanceTimersByTime(5000);
    expect(lines).toHaveLength(1);
    counter.note();
    vi.advanceTimersByTime(1000);
    expect(lines[1]![0]).toEqual({ refused: 1, periodMs: 1000 });
  });
});
