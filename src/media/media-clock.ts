/**
 * The only way the media layer reads time or arms timers, so that tests can
 * drive sessions and the pacing clock with a fake (test-support/).
 */
export interface MediaClock {
  /** Monotonic milliseconds (fractional), for schedules and intervals. */
  now(): number;
  /** Wall-clock milliseconds since the Unix epoch, for RTCP NTP timestamps. */
  wallNow(): number;
  setTimer(fn: () => void, delayMs: number): MediaTimer;
  clearTimer(timer: MediaTimer): void;
}

export type MediaTimer = { readonly __mediaTimer: true } | ReturnType<typeof setTimeout>;

export const systemMediaClock: MediaClock = {
  now: () => performance.now(),
  wallNow: () => performance.timeOrigin + performance.now(),
  setTimer: (fn, delayMs) => setTimeout(fn, delayMs),
  clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};
