import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REPLAY_WINDOW_SIZE, ReplayWindow } from './srtp-replay-window.js';

describe('SRTP replay window (RFC 3711 §3.3.2)', () => {
  it('accepts anything first, then refuses the same index', () => {
    const w = new ReplayWindow();
    expect(w.check(1000)).toBe('ok');
    w.accept(1000);
    expect(w.highest).toBe(1000);
    expect(w.check(1000)).toBe('replayed');
    expect(w.check(1001)).toBe('ok');
  });

  it('accepts late packets inside the window once, refuses those 64 or more behind', () => {
    const w = new ReplayWindow();
    w.accept(100);
    expect(w.check(37)).toBe('ok'); // 63 behind: the oldest slot
    expect(w.check(36)).toBe('too_old'); // 64 behind
    w.accept(37);
    expect(w.check(37)).toBe('replayed');
    w.accept(70); // 30 behind: bit 30 of the low word
    w.accept(60); // 40 behind: bit 8 of the high word
    expect(w.check(70)).toBe('replayed');
    expect(w.check(60)).toBe('replayed');
    expect(w.check(61)).toBe('ok');
  });

  it('slides: by less than 32, by exactly 32, by 33 to 63, and by 64 or more', () => {
    for (const step of [1, 5, 31, 32, 33, 50, 63, 64, 65, 1000]) {
      const w = new ReplayWindow();
      w.accept(1000);
      w.accept(999);
      w.accept(1000 + step);
      expect(w.check(1000)).toBe(step < REPLAY_WINDOW_SIZE ? 'replayed' : 'too_old');
      expect(w.check(999)).toBe(step + 1 < REPLAY_WINDOW_SIZE ? 'replayed' : 'too_old');
      expect(w.check(1001)).toBe(step === 1 ? 'replayed' : step - 1 < 64 ? 'ok' : 'too_old');
    }
  });

  it('agrees with a set of accepted indices for any arrival order (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 200 }), (indices) => {
        const w = new ReplayWindow();
        const seen = new Set<number>();
        let highest = -1;
        for (const i of indices) {
          const expected =
            highest >= 0 && highest - i >= 64 ? 'too_old' : seen.has(i) ? 'replayed' : 'ok';
          expect(w.check(i)).toBe(expected);
          if (expected === 'ok') {
            w.accept(i);
            seen.add(i);
            highest = Math.max(highest, i);
          }
        }
      }),
      { seed: 64, numRuns: 300 },
    );
  });
});
