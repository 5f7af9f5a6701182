// The monitor's state machine with a fake clock and a fake transaction layer:
// timeouts count up to failuresBeforeOffline, DNS and transport failures are
// final at once, an answer clears lastError; only transitions are events.
import { describe, expect, it } from 'vitest';
import type { SipResponse } from '../message/types.js';
import type { TransactionLayer } from '../transaction/transaction-layer.js';
import type { Clock } from '../transport/clock.js';
import { TrunkMonitor, type TrunkMonitorEvents } from './trunk-monitor.js';

interface Pending {
  onResponse(res: SipResponse): void;
  onTimeout(): void;
  onTransportError(err: Error): void;
}

function rig(opts: { failuresBeforeOffline?: number; resolves?: boolean } = {}) {
  let now = 1_700_000_000_000;
  const timers: Array<{ fn: () => void; at: number }> = [];
  const clock: Clock = {
    now: () => now,
    setTimer: (fn, ms) => {
      const t = { fn, at: now + ms };
      timers.push(t);
      return t;
    },
    clearTimer: (h) => {
      const i = timers.indexOf(h as (typeof timers)[number]);
      if (i >= 0) timers.splice(i, 1);
    },
  };
  const sent: Pending[] = [];
  const tx = {
    sendRequest: (_req: unknown, _branch: string, _dest: unknown, tu: Pending) => sent.push(tu),
  } as unknown as TransactionLayer;
  const monitor = new TrunkMonitor(
    {
      trunks: [{ id: 't', host: 'carrier.test', port: 5060, transport: 'udp' }],
      intervalMs: 1000,
      failuresBeforeOffline: opts.failuresBeforeOffline,
    },
    {
      tx,
      clock,
      resolve: async () =>
        opts.resolves === false ? [] : [{ host: '192.0.2.1', port: 5060, transport: 'udp' }],
      sentBy: () => '127.0.0.1:5060',
      userAgent: 'test',
      timerFMs: 32_000,
      onStop: () => {},
    },
  );
  const events: Array<[string, unknown]> = [];
  monitor.on('online', (e) => events.push(['online', e]));
  monitor.on('offline', (e) => events.push(['offline', e]));
  const flush = () => new Promise((r) => setImmediate(r));
  /** Runs the next ping: advances the clock to its timer and lets resolve() settle. */
  const nextPing = async (): Promise<Pending> => {
    const before = sent.length;
    const t = timers.shift();
    if (t) {
      now = t.at;
      t.fn();
    }
    await flush();
    expect(sent.length).toBe(before + 1);
    return sent[sent.length - 1]!;
  };
  const tick = (ms: number) => (now += ms);
  return { monitor, events, sent, timers, nextPing, flush, tick, now: () => now };
}

const ok = { kind: 'response', status: 200 } as unknown as SipResponse;

describe('TrunkMonitor', () => {
  it('with failuresBeforeOffline 2, one timeout records lastError and keeps the state; the second makes it offline; an answer brings it back', async () => {
    const r = rig({ failuresBeforeOffline: 2 });
    r.monitor.start();
    await r.flush();
    const first = r.sent[0]!;
    r.tick(32_000);
    first.onTimeout();
    expect(r.monitor.health('t')).toEqual({
      status: 'unknown',
      checkedAt: r.now(),
      lastError: 'no answer to OPTIONS within 32 s (Timer F)',
    });
    expect(r.events).toEqual([]);

    (await r.nextPing()).onTimeout();
    expect(r.monitor.health('t').status).toBe('offline');
    expect(r.events).toEqual([
      [
        'offline',
        { trunkId: 't', cause: 'timeout', lastError: 'no answer to OPTIONS within 32 s (Timer F)' },
      ] satisfies [string, TrunkMonitorEvents['offline']],
    ]);

    (await r.nextPing()).onTimeout(); // still offline: no second event
    expect(r.events).toHaveLength(1);

    (await r.nextPing()).onResponse(ok);
    expect(r.monitor.health('t')).toEqual({
      status: 'online',
      checkedAt: r.now(),
      lastError: null,
    });
    expect(r.events[1]).toEqual(['online', { trunkId: 't', status: 200 }]);
    r.monitor.stop();
  });

  it('an answer resets the count: timeouts must come in a row', async () => {
    const r = rig({ failuresBeforeOffline: 2 });
    r.monitor.start();
    await r.flush();
    r.sent[0]!.onTimeout();
    (await r.nextPing()).onResponse(ok);
    (await r.nextPing()).onTimeout();
    expect(r.monitor.status('t')).toBe('online');
    expect(r.events.map((e) => e[0])).toEqual(['online']);
    r.monitor.stop();
  });

  it('a transport error is offline at once, whatever the threshold, and names the error', async () => {
    const r = rig({ failuresBeforeOffline: 3 });
    r.monitor.start();
    await r.flush();
    r.sent[0]!.onTransportError(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    );
    expect(r.monitor.health('t')).toMatchObject({
      status: 'offline',
      lastError: 'transport error ECONNREFUSED: connect ECONNREFUSED',
    });
    r.monitor.stop();
  });

  it('a host that does not resolve is offline at once, no OPTIONS sent', async () => {
    const r = rig({ failuresBeforeOffline: 3, resolves: false });
    r.monitor.start();
    await r.flush();
    expect(r.sent).toHaveLength(0);
    expect(r.monitor.health('t')).toEqual({
      status: 'offline',
      checkedAt: r.now(),
      lastError: 'the host carrier.test did not resolve',
    });
    expect(r.events).toEqual([
      [
        'offline',
        { trunkId: 't', cause: 'dns', lastError: 'the host carrier.test did not resolve' },
      ],
    ]);
    r.monitor.stop();
  });

  it('the local 503 of a spent client-transaction budget says nothing about the trunk: no state, no check', async () => {
    const r = rig();
    r.monitor.start();
    await r.flush();
    const local = {
      kind: 'response',
      status: 503,
      headers: [
        { name: 'warning', value: '399 gateway "local client transaction budget reached"' },
      ],
    } as unknown as SipResponse;
    r.sent[0]!.onResponse(local);
    expect(r.monitor.health('t')).toEqual({ status: 'unknown', checkedAt: null, lastError: null });
    expect(r.events).toEqual([]);
    // a real 503 from the trunk is an answer: the trunk is up
    (await r.nextPing()).onResponse({ ...local, headers: [] } as unknown as SipResponse);
    expect(r.monitor.status('t')).toBe('online');
    r.monitor.stop();
  });

  it('a trunk it does not monitor is unknown, never checked', () => {
    const r = rig();
    expect(r.monitor.health('other')).toEqual({
      status: 'unknown',
      checkedAt: null,
      lastError: null,
    });
  });
});
