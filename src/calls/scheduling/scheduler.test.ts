// The durable scheduler (DESIGN "Reliability rules"): dialed once, never
// twice across two daemons on one SQLite file, exactly once across a crash
// between claim and dial, late calls re-checked. The dial callback behaves
// as the lead's dialer must: `trying` written (compare-and-set) before the
// INVITE would go out.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addCall, makeKit, type Kit } from '../protections/protections-test-kit.js';
import { scheduleCall } from './test-support/schedule-existing-call.js';
import { Scheduler, type DialAttempt, type SchedulerOptions } from './scheduler.js';

const MIN = 60_000;

interface Dialer {
  dial: (recordId: string, a: DialAttempt) => Promise<void>;
  calls: { recordId: string; attempt: DialAttempt; by: string }[];
}

/** Records every dial; writes `trying` only from a pre-dial status, like the real dialer. */
function dialer(kit: Kit, by: string, log: Dialer['calls'] = []): Dialer {
  return {
    calls: log,
    dial: (recordId, attempt) => {
      const iso = new Date(kit.clock.now()).toISOString();
      const moved = kit.store.calls.update(recordId, { status: 'trying' }, iso, {
        onlyFrom: ['scheduled', 'to_be_processed'],
      });
      if (moved) log.push({ recordId, attempt, by });
      return Promise.resolve();
    },
  };
}

function scheduler(kit: Kit, d: Dialer, opts: SchedulerOptions = {}): Scheduler {
  return new Scheduler(
    {
      schedules: kit.schedules,
      calls: kit.store.calls,
      clock: kit.clock,
      dial: d.dial,
    },
    { owner: 'daemon-a', leaseMs: MIN, ...opts },
  );
}

/** A scheduled record and its initial row, due at `due` (ISO). */
function scheduled(kit: Kit, due: string, number = '+12125551234') {
  const record = addCall(kit, { status: 'scheduled', phoneNumber: number, scheduledAt: due });
  const s = scheduleCall(kit, {
    recordId: record.id,
    dueAt: Date.parse(due),
    kind: 'initial',
    round: 1,
  });
  return { record, s };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Scheduler', () => {
  it('a poke polls at once for a call due before the next poll, not for one due later', () => {
    const kit = makeKit();
    const armed: number[] = [];
    const sch = new Scheduler(
      {
        schedules: kit.schedules,
        calls: kit.store.calls,
        clock: kit.clock,
        dial: () => Promise.resolve(),
        timers: { setTimeout: (_fn, ms) => armed.push(ms), clearTimeout: () => undefined },
      },
      { owner: 'daemon-a', pollIntervalMs: 1000 },
    );
    sch.start();
    expect(armed).toEqual([0]);
    sch.poke(kit.clock.now() + 86_400_000); // tomorrow: the regular polls find it
    sch.poke(kit.clock.now() + 1001);
    expect(armed).toEqual([0]);
    sch.poke(kit.clock.now() + 1000); // due before the next poll
    sch.poke(kit.clock.now() - 5);
    sch.poke();
    expect(armed).toEqual([0, 0, 0, 0]);
  });

  it('dials a due call once, with its attempt and idempotency key', async () => {
    const kit = makeKit();
    const d = dialer(kit, 'a');
    const { record, s } = scheduled(kit, '2026-03-10T15:10:00.000Z');
    const sch = scheduler(kit, d);
    expect(await sch.tick()).toBe(0);
    kit.clock.advance(10 * MIN);
    expect(await sch.tick()).toBe(1);
    expect(await sch.tick()).toBe(0);
    expect(d.calls).toHaveLength(1);
    expect(d.calls[0]!.attempt).toMatchObject({
      kind: 'initial',
      attempt: 1,
      idempotencyKey: `${record.id}:1`,
      late: false,
    });
    expect(kit.schedules.get(s.scheduleId)).toMatchObject({ state: 'done', outcome: 'dialed' });
  });

  it('polls on its own timer (fake timers) and stops', async () => {
    vi.useFakeTimers();
    const kit = makeKit();
    const d = dialer(kit, 'a');
    scheduled(kit, '2026-03-10T15:00:05.000Z');
    const sch = scheduler(kit, d, { pollIntervalMs: 1000 });
    sch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(d.calls).toHaveLength(0);
    kit.clock.advance(5000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(d.calls).toHaveLength(1);
    await sch.stop();
    scheduled(kit, '2026-03-10T15:00:05.000Z', '+12125550002');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(d.calls).toHaveLength(1);
  });

  it('two daemons sharing one SQLite file never dial the same row twice', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-sched-')), 'gateway.sqlite');
    const a = makeKit({ path });
    const b = makeKit({ path, companyId: a.companyId });
    b.clock.set(a.clock.now());
    for (let i = 0; i < 30; i++) scheduled(a, '2026-03-10T15:00:00.000Z', `+1212555${1000 + i}`);
    const log: Dialer['calls'] = [];
    const sa = scheduler(a, dialer(a, 'a', log), { owner: 'a', batchSize: 4 });
    const sb = scheduler(b, dialer(b, 'b', log), { owner: 'b', batchSize: 4 });
    for (let round = 0; round < 10; round++) await Promise.all([sa.tick(), sb.tick()]);
    expect(log).toHaveLength(30);
    expect(new Set(log.map((c) => c.recordId)).size).toBe(30);
    expect(log.some((c) => c.by === 'a')).toBe(true);
    expect(log.some((c) => c.by === 'b')).toBe(true);
    a.store.close();
    b.store.close();
  });

  it('crash after claim: re-claimed after the lease expires and dialed exactly once', async () => {
    const kit = makeKit();
    const { s } = scheduled(kit, '2026-03-10T15:00:00.000Z');
    // Daemon A claims the row, then dies before dispatching it.
    const claimed = kit.schedules.claimDue('dead', kit.clock.now(), MIN, 10, 'x');
    expect(claimed.map((r) => r.id)).toEqual([s.scheduleId]);
    const d = dialer(kit, 'b');
    const b = scheduler(kit, d, { owner: 'b' });
    expect(await b.tick()).toBe(0); // lease still held
    kit.clock.advance(MIN + 1);
    expect(await b.tick()).toBe(1);
    kit.clock.advance(10 * MIN);
    expect(await b.tick()).toBe(0);
    expect(d.calls).toHaveLength(1);
    expect(kit.schedules.get(s.scheduleId)).toMatchObject({ state: 'done', claims: 2 });
  });

  it('crash after dispatch but before `trying`: no INVITE went out, so it is re-armed once', async () => {
    const kit = makeKit();
    const { s } = scheduled(kit, '2026-03-10T15:00:00.000Z');
    const now = kit.clock.now();
    kit.schedules.claimDue('dead', now, MIN, 10, new Date(now).toISOString());
    kit.schedules.markDispatched(s.scheduleId, 'dead', now, new Date(now).toISOString());
    const d = dialer(kit, 'b');
    const b = scheduler(kit, d, { owner: 'b' });
    expect(await b.tick()).toBe(0);
    kit.clock.advance(MIN + 1);
    expect(await b.tick()).toBe(1);
    expect(await b.tick()).toBe(0);
    expect(d.calls).toHaveLength(1);
  });

  it('crash after `trying` was written: never dialed again', async () => {
    const kit = makeKit();
    const { record, s } = scheduled(kit, '2026-03-10T15:00:00.000Z');
    const now = kit.clock.now();
    const iso = new Date(now).toISOString();
    kit.schedules.claimDue('dead', now, MIN, 10, iso);
    kit.schedules.markDispatched(s.scheduleId, 'dead', now, iso);
    kit.store.calls.update(record.id, { status: 'trying' }, iso);
    const d = dialer(kit, 'b');
    const b = scheduler(kit, d, { owner: 'b' });
    kit.clock.advance(5 * MIN);
    expect(await b.tick()).toBe(0);
    expect(d.calls).toHaveLength(0);
    expect(kit.schedules.get(s.scheduleId)).toMatchObject({ state: 'done' });
  });

  it('a late call still inside the window is dialed, flagged late', async () => {
    const kit = makeKit();
    scheduled(kit, '2026-03-10T14:00:00.000Z');
    const d = dialer(kit, 'a');
    expect(await scheduler(kit, d).tick()).toBe(1);
    expect(d.calls[0]!.attempt.late).toBe(true);
  });

  it('a call hung up while scheduled is not dialed', async () => {
    const kit = makeKit();
    const { record, s } = scheduled(kit, '2026-03-10T15:00:00.000Z');
    kit.store.calls.update(record.id, { status: 'cancelled' }, 'x');
    const d = dialer(kit, 'a');
    expect(await scheduler(kit, d).tick()).toBe(0);
    expect(kit.schedules.get(s.scheduleId)!.state).toBe('done');
  });
});
