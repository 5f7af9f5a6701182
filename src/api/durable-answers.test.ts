import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreNotDurableError } from '../store/wal-sync.js';
import { startTestGateway, type TestGateway } from './test-support/test-gateway.js';

let gw: TestGateway;
beforeEach(async () => {
  gw = await startTestGateway();
});
afterEach(async () => {
  await gw.app.close();
});

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('answers wait for the store to be on disk (group-commit.md)', () => {
  it('an API answer leaves only once the writes before it are durable; a failed fsync is a server error, not a lie', async () => {
    const t = await gw.tenant();
    let release!: () => void;
    let fail!: (e: Error) => void;
    gw.store.unitOfWork.durable = () =>
      new Promise<void>((resolve, reject) => {
        release = resolve;
        fail = reject;
      });
    let answered = false;
    const optOut = t
      .request({
        method: 'POST',
        url: '/api/v1/phones/opt-outs',
        payload: { phoneNumber: '+12125550111' },
      })
      .then((r) => {
        answered = true;
        return r;
      });
    await ticks(20);
    expect(answered).toBe(false);
    release();
    expect((await optOut).statusCode).toBe(201);

    const second = t.request({
      method: 'POST',
      url: '/api/v1/phones/opt-outs',
      payload: { phoneNumber: '+12125550112' },
    });
    await ticks(20);
    fail(new Error('EIO'));
    const refused = await second;
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ error: 'server_unavailable' });
  });

  it('initiate-call whose admission could not be made durable answers 503, not 500', async () => {
    const t = await gw.tenant();
    gw.store.unitOfWork.runDurable = () =>
      Promise.reject(new StoreNotDurableError('the WAL was not synced: EIO'));
    const res = await t.request({
      method: 'POST',
      url: '/api/v1/phones/calls/initiate-call',
      payload: { destinationNumber: '+12125550113', agentId: t.agent.id },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'server_unavailable' });
  });

  it('the public routes (health, metrics) do not wait', async () => {
    gw.store.unitOfWork.durable = () => new Promise<void>(() => undefined);
    const res = await gw.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
  });
});
