import { describe, expect, it } from 'vitest';
import { InactivityWatch } from './inactivity-watch.js';

describe('InactivityWatch', () => {
  it('reports once when silence reaches the timeout, again only after packets resumed', () => {
    const w = new InactivityWatch(0, 1000);
    expect(w.check(999, -1, true)).toBeNull();
    expect(w.check(1000, -1, true)).toBe(1000);
    expect(w.check(1500, -1, true)).toBeNull(); // reported already
    expect(w.check(1600, 1550, true)).toBeNull(); // a packet: silence over
    expect(w.check(2600, 1550, true)).toBe(1050);
  });

  it('counts from the last media change and stays quiet on hold or when turned off', () => {
    const w = new InactivityWatch(0, 1000);
    w.reset(800); // re-INVITE to a new address
    expect(w.check(1700, -1, true)).toBeNull();
    expect(w.check(1800, -1, true)).toBe(1000);
    const hold = new InactivityWatch(0, 1000);
    expect(hold.check(5000, -1, false)).toBeNull(); // sendonly/inactive: no RTP expected
    const off = new InactivityWatch(0, 0);
    expect(off.check(60_000, -1, true)).toBeNull();
  });
});
