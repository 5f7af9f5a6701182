// RFC 4028 session timer logic under a manual clock: what the INVITE asks
// for, when the refresher refreshes, when each side gives up (§10).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../transport/fake-clock.js';
import {
  expiryMs,
  parseMinSe,
  parseSessionExpires,
  SessionTimer,
  sessionTimerHeaders,
} from './session-timer.js';

function timer() {
  const clock = new FakeClock();
  const log: string[] = [];
  const t = new SessionTimer(clock, {
    refresh: () => log.push(`refresh@${clock.now()}`),
    expired: () => log.push(`expired@${clock.now()}`),
  });
  return { clock, log, t };
}

describe('what the INVITE asks for (§7.1)', () => {
  it('Session-Expires and Min-SE from the config; Min-SE never below 90, the interval never below Min-SE', () => {
    expect(sessionTimerHeaders({ expiresSeconds: 1800, minSeconds: 90 })).toEqual({
      expires: 1800,
      minSe: 90,
    });
    expect(sessionTimerHeaders({ expiresSeconds: 60, minSeconds: 30 })).toEqual({
      expires: 90,
      minSe: 90,
    });
    expect(sessionTimerHeaders({ expiresSeconds: 120, minSeconds: 300 })).toEqual({
      expires: 300,
      minSe: 300,
    });
  });

  it('0 asks for nothing; a 422 Min-SE raises both', () => {
    expect(sessionTimerHeaders({ expiresSeconds: 0, minSeconds: 90 })).toBeUndefined();
    expect(sessionTimerHeaders({ expiresSeconds: 1800, minSeconds: 90 }, 3600)).toEqual({
      expires: 3600,
      minSe: 3600,
    });
    expect(sessionTimerHeaders({ expiresSeconds: 1800, minSeconds: 90 }, 600)).toEqual({
      expires: 1800,
      minSe: 600,
    });
  });

  it('parses Session-Expires and Min-SE values', () => {
    expect(parseSessionExpires('1800;refresher=UAS')).toEqual({ seconds: 1800, refresher: 'uas' });
    expect(parseSessionExpires('90')).toEqual({ seconds: 90, refresher: undefined });
    expect(parseSessionExpires('x')).toBeUndefined();
    expect(parseMinSe('600')).toBe(600);
    expect(parseMinSe(' 120 ;x=y')).toBe(120);
    expect(parseMinSe('0')).toBeUndefined();
    expect(parseMinSe(undefined)).toBeUndefined();
  });
});

describe('SessionTimer (§7.4, §10)', () => {
  it('the refresher refreshes at half the interval and, with no successful refresh, expires at the interval', () => {
    const { clock, log, t } = timer();
    t.arm(90, true);
    clock.advance(44_999);
    expect(log).toEqual([]);
    clock.advance(1);
    expect(log).toEqual(['refresh@45000']);
    clock.advance(45_000);
    expect(log).toEqual(['refresh@45000', 'expired@90000']);
    expect(t.active).toBe(false);
  });

  it('a successful refresh starts the interval again', () => {
    const { clock, log, t } = timer();
    t.arm(90, true);
    clock.advance(45_000);
    t.refreshed();
    clock.advance(89_999);
    expect(log).toEqual(['refresh@45000', 'refresh@90000']);
    clock.advance(1);
    expect(log).toEqual(['refresh@45000', 'refresh@90000', 'expired@135000']);
  });

  it('the other side gives up at interval − min(32 s, interval / 3)', () => {
    expect(expiryMs(1800, false)).toBe(1768_000);
    expect(expiryMs(90, false)).toBe(60_000);
    const { clock, log, t } = timer();
    t.arm(1800, false);
    clock.advance(1767_999);
    expect(log).toEqual([]);
    clock.advance(1);
    expect(log).toEqual(['expired@1768000']);
  });

  it('a refresh from the far end (re-arm) moves the expiry', () => {
    const { clock, log, t } = timer();
    t.arm(90, false);
    clock.advance(50_000);
    t.arm(90, false);
    clock.advance(59_999);
    expect(log).toEqual([]);
    clock.advance(1);
    expect(log).toEqual(['expired@110000']);
  });

  it('a failed refresh is retried only while the deadline is still ahead', () => {
    const { clock, log, t } = timer();
    t.arm(90, true);
    clock.advance(45_000); // refresh 1 fails
    expect(t.retryRefresh(4_000)).toBe(true);
    clock.advance(4_000);
    expect(log).toEqual(['refresh@45000', 'refresh@49000']);
    clock.advance(36_000); // at 85 s: a retry 9 s later would be past the 90 s deadline
    expect(t.retryRefresh(9_000)).toBe(false);
    clock.advance(5_000);
    expect(log).toEqual(['refresh@45000', 'refresh@49000', 'expired@90000']);
  });

  it('the non-refresher never retries, and stop() clears everything', () => {
    const { clock, log, t } = timer();
    t.arm(90, false);
    expect(t.retryRefresh(1000)).toBe(false);
    t.stop();
    expect(clock.timerCount).toBe(0);
    clock.advance(200_000);
    expect(log).toEqual([]);
  });
});
