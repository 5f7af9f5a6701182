// The drachtio engine's connection: readiness, back-off, loss and stop,
// against an in-memory drachtio-srf and a manual clock.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../transport/fake-clock.js';
import { backoffDelay, DrachtioSignaling } from './drachtio-signaling.js';
import { connected, dial, FakeSrf, flush, record, REMOTE } from './fake-srf.js';

describe('DrachtioSignaling connection', () => {
  it('backoffDelay doubles from initialMs up to maxMs', () => {
    const p = { initialMs: 500, maxMs: 15_000, factor: 2 };
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => backoffDelay(p, a))).toEqual([
      500, 1000, 2000, 4000, 8000, 15_000, 15_000,
    ]);
  });

  it('connects with drachtio-srf reconnect off, resolves on connect, readiness follows', async () => {
    const srf = new FakeSrf();
    const sig = new DrachtioSignaling(
      { host: 'drachtio', port: 9022, secret: 's3' },
      { createSrf: () => srf, clock: new FakeClock() },
    );
    expect(sig.isConnected()).toBe(false);
    const ready = sig.connect();
    expect(srf.connects).toEqual([
      { host: 'drachtio', port: 9022, secret: 's3', reconnect: { maxAttempts: 1 } },
    ]);
    srf.accept('udp/10.0.0.5:5060');
    await ready;
    expect(sig.isConnected()).toBe(true);
    expect(sig.serverHostport).toBe('udp/10.0.0.5:5060');
    await sig.connect(); // already connected: resolves at once
  });

  it('refused at first: retries with back-off until drachtio-server is there', async () => {
    const srf = new FakeSrf();
    const clock = new FakeClock();
    const sig = new DrachtioSignaling(
      { host: 'drachtio', port: 9022, secret: 's' },
      { createSrf: () => srf, clock, reconnect: { initialMs: 100, maxMs: 1000, factor: 2 } },
    );
    let resolved = false;
    void sig.connect().then(() => (resolved = true));
    const delays: number[] = [];
    sig.on('disconnected', (e) => delays.push(e.retryInMs));
    for (let i = 0; i < 5; i++) {
      srf.drop('connect ECONNREFUSED');
      clock.advance(delays.at(-1)!);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    expect(srf.connects).toHaveLength(6);
    srf.accept();
    await flush();
    expect(resolved).toBe(true);
    // After a success the back-off starts over.
    srf.drop();
    expect(delays.at(-1)).toBe(100);
  });

  it('connection loss: readiness false, unanswered legs fail 503 transport, live legs end, reconnect', async () => {
    const { srf, sig, clock } = await connected();
    const ringing = sig.invite(dial());
    const ringingSeen = record(ringing);
    srf.last().sent();
    const live = sig.invite(dial());
    const liveSeen = record(live);
    srf.last().answer(REMOTE);
    await flush();
    let readiness: boolean[] = [];
    sig.on('disconnected', () => (readiness = [...readiness, sig.isConnected()]));
    sig.on('connected', () => (readiness = [...readiness, sig.isConnected()]));
    srf.drop();
    expect(sig.isConnected()).toBe(false);
    expect(ringingSeen).toEqual([
      ['failed', { status: 503, reason: 'Service Unavailable', cause: 'transport' }],
    ]);
    expect(liveSeen.at(-1)).toEqual(['ended', { by: 'local', detail: 'signaling_lost' }]);
    expect(sig.liveLegs).toBe(0);
    // A new call while down fails at once, without touching drachtio-srf.
    const calls = srf.uacs.length;
    const down = record(sig.invite(dial()));
    await flush();
    expect(down).toEqual([
      ['failed', { status: 503, reason: 'Service Unavailable', cause: 'transport' }],
    ]);
    expect(srf.uacs).toHaveLength(calls);
    clock.advance(500);
    expect(srf.connects).toHaveLength(2);
    srf.accept();
    await flush();
    expect(readiness).toEqual([false, true]);
    expect(sig.isConnected()).toBe(true);
  });

  it('a refused secret rejects connect() and keeps retrying', async () => {
    const srf = new FakeSrf();
    const clock = new FakeClock();
    const sig = new DrachtioSignaling(
      { host: 'drachtio', port: 9022, secret: 'wrong' },
      { createSrf: () => srf, clock },
    );
    const ready = sig.connect();
    srf.emit('connect', new Error('failed to authenticate to server'));
    await expect(ready).rejects.toMatchObject({ code: 'auth_failed' });
    clock.advance(500);
    expect(srf.connects).toHaveLength(2);
  });

  it('stop(): no more retries, connection closed, pending connect() rejected', async () => {
    const { srf, sig, clock } = await connected();
    await sig.stop();
    expect(srf.disconnects).toBe(1);
    expect(sig.isConnected()).toBe(false);
    srf.drop();
    clock.advance(60_000);
    expect(srf.connects).toHaveLength(1);
    await expect(sig.connect()).rejects.toMatchObject({ code: 'stopped' });
  });
});
