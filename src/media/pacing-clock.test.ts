import { describe, expect, it } from 'vitest';
import { PacingClock, SPACING_BIN_MS } from './pacing-clock.js';
import { FakeMediaClock } from './test-support/fake-media-clock.js';

function recorder(clock: FakeMediaClock): {
  frames: number[];
  times: number[];
  onPacingTick(f: number): void;
} {
  const r = {
    frames: [] as number[],
    times: [] as number[],
    onPacingTick(f: number) {
      r.frames.push(f);
      r.times.push(clock.now());
    },
  };
  return r;
}

describe('PacingClock', () => {
  it('ticks every 20 ms on an absolute schedule, spreading targets over slots', () => {
    const clock = new FakeMediaClock();
    const pacing = new PacingClock(clock, { slots: 4, leadMs: 0, minPerSlot: 1 });
    const a = recorder(clock);
    const b = recorder(clock);
    pacing.add(a);
    pacing.add(b);
    clock.advance(200);
    expect(a.frames).toEqual([...Array(11).keys()]);
    expect(a.times.slice(0, 3)).toEqual([0, 20, 40]);
    expect(b.times.slice(0, 3)).toEqual([5, 25, 45]);
  });

  it('fills one slot before opening the next, and wakes only for occupied slots', () => {
    const clock = new FakeMediaClock();
    const pacing = new PacingClock(clock, { slots: 4, leadMs: 0, minPerSlot: 2 });
    const handles = [1, 2, 3, 4, 5].map(() => pacing.add({ onPacingTick: () => {} }));
    expect(handles.map((h) => h.slot)).toEqual([0, 0, 1, 1, 2]);
    clock.advance(1000);
    expect(pacing.stats().wakeups).toBeLessThanOrEqual(3 * 51); // 3 of 4 slots occupied
    for (const h of handles.slice(2)) pacing.remove(h);
    const before = pacing.stats().wakeups;
    clock.advance(1000);
    expect(pacing.stats().wakeups - before).toBeLessThanOrEqual(51);
    // empty slots leave no spacing samples: every interval of an occupied slot is 20 ms
    const spacing = pacing.spacingHistogram();
    expect(spacing.reduce((x, y) => x + y, 0)).toBe(spacing[0]);
  });

  it('does not drift when timers fire late', () => {
    const clock = new FakeMediaClock();
    const late = {
      ...clock,
      now: () => clock.now(),
      wallNow: () => clock.wallNow(),
      setTimer: (fn: () => void, ms: number) => clock.setTimer(fn, ms + 0.7), // every timer 0.7 ms late
      clearTimer: (t: Parameters<FakeMediaClock['clearTimer']>[0]) => clock.clearTimer(t),
    };
    const pacing = new PacingClock(late, { slots: 1, leadMs: 0 });
    const a = recorder(clock);
    pacing.add(a);
    clock.advance(20_000);
    expect(a.frames.length).toBe(1000); // 0..999 by t = 19 980.7
    for (let i = 1; i < a.times.length; i++) {
      expect(a.times[i]! - 20 * i).toBeCloseTo(0.7, 6); // lateness constant, never accumulating
    }
    const spacing = pacing.spacingHistogram();
    expect(spacing[0]).toBe(999); // every interval exactly 20 ms
    expect(spacing.reduce((x, y) => x + y, 0)).toBe(999);
  });

  it('counts a pause in the middle of a slot in the spacing of the targets it held back', () => {
    const clock = new FakeMediaClock();
    const pacing = new PacingClock(clock, { slots: 1, leadMs: 0 });
    const ticks: string[] = [];
    let pauseAtFrame = -1;
    const target = (name: string, pauses: boolean) => ({
      onPacingTick(frame: number) {
        ticks.push(name);
        // a 3 ms collection inside this target's frame: time moves, timers do not run
        if (pauses && frame === pauseAtFrame) (clock as unknown as { t: number }).t += 3;
      },
    });
    // slots run their targets last-added first: c, b (pauses), a
    pacing.add(target('a', false));
    pacing.add(target('b', true));
    pacing.add(target('c', false));
    clock.advance(100); // frames 0..5, all on time
    expect(pacing.spacingHistogram(true)[0]).toBe(15); // 5 intervals × 3 targets, all 20 ms
    pauseAtFrame = 6;
    clock.advance(100);
    const spacing = pacing.spacingHistogram();
    // 'a' started frame 6 three ms late (23 ms after frame 5) and frame 7 on time (17 ms): two
    // samples in the 3 ms bin; the tick itself started on time, so a per-tick measure saw nothing
    const bin3 = Math.round(3 / SPACING_BIN_MS);
    expect(spacing[bin3]).toBe(2);
    expect(spacing.reduce((x, y) => x + y, 0)).toBe(15);
    expect(ticks.slice(0, 3)).toEqual(['c', 'b', 'a']);
  });

  it('catches up a short stall back to back, skips a long one', () => {
    const clock = new FakeMediaClock();
    const pacing = new PacingClock(clock, { slots: 1, leadMs: 0, maxCatchUpFrames: 5 });
    const a = recorder(clock);
    pacing.add(a);
    const stall = (ms: number): void => {
      const start = clock.now();
      // block the "event loop": move time without running timers
      (clock as unknown as { t: number }).t = start + ms;
    };
    clock.advance(20); // frames 0, 1
    stall(60);
    clock.advance(0); // frames 2..4 back to back
    expect(a.frames).toEqual([0, 1, 2, 3, 4]);
    stall(1000);
    clock.advance(0);
    expect(a.frames.at(-1)).toBe(54);
    expect(a.frames.length).toBeLessThan(10);
    expect(pacing.stats().skippedTicks).toBeGreaterThan(40);
  });

  it('stops its timer with the last target and survives removal during a tick', () => {
    const clock = new FakeMediaClock();
    const pacing = new PacingClock(clock, { slots: 1 });
    const seen: string[] = [];
    const handles: ReturnType<PacingClock['add']>[] = [];
    const mk = (name: string) => ({
      onPacingTick: () => {
        seen.push(name);
        if (name === 'b') pacing.remove(handles[1]!);
      },
    });
    handles.push(pacing.add(mk('a')), pacing.add(mk('b')), pacing.add(mk('c')));
    clock.advance(20);
    expect(seen.filter((s) => s === 'b')).toHaveLength(1);
    expect(seen.filter((s) => s === 'a')).toHaveLength(2);
    expect(seen.filter((s) => s === 'c')).toHaveLength(2);
    pacing.remove(handles[0]!);
    pacing.remove(handles[2]!);
    expect(pacing.size).toBe(0);
    const before = seen.length;
    clock.advance(100);
    expect(seen.length).toBe(before);
  });

  it('poll sends a due frame at once when the timer is held up, without re-entry or extra wake-ups', () => {
    const clock = new FakeMediaClock();
    // every timer 6 ms late: the event loop is busy with a batch of I/O
    const busy = {
      now: () => clock.now(),
      wallNow: () => clock.wallNow(),
      setTimer: (fn: () => void, ms: number) => clock.setTimer(fn, ms + 6),
      clearTimer: (t: Parameters<FakeMediaClock['clearTimer']>[0]) => clock.clearTimer(t),
    };
    const pacing = new PacingClock(busy, { slots: 1, leadMs: 0 });
    const a = recorder(clock);
    let nested = 0;
    pacing.add({
      onPacingTick(f) {
        a.onPacingTick(f);
        pacing.poll(); // a handler polling again does not run the slot twice
        nested++;
      },
    });
    expect(a.times).toEqual([]); // the first tick waits for its (late) timer or a poll
    for (let t = 0; t < 100; t += 0.5) {
      clock.advance(0.5);
      pacing.poll(); // a packet arrives every 0.5 ms
    }
    expect(a.frames).toEqual([0, 1, 2, 3, 4, 5]);
    expect(a.times).toEqual([0.5, 20, 40, 60, 80, 100]); // on time, not 6 ms late
    expect(nested).toBe(6);
    expect(pacing.stats().wakeups).toBe(0); // each armed timer was replaced before firing
    // without polls the late timer still keeps the schedule (absolute, no drift)
    clock.advance(210);
    expect(a.frames.at(-1)).toBe(15);
    expect(a.times.at(-1)).toBe(306); // frame 15 due at 300, sent by a timer 6 ms late
  });
});
