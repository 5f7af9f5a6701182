// Time for the SIP stack, injected so that tests can drive every timer.

/** Opaque handle returned by `Clock.setTimer`. */
export type TimerHandle = unknown;

/** The only way src/sip reads time or schedules work. */
export interface Clock {
  /** Milliseconds, monotonic enough for durations. */
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** The real clock. It looks the globals up on every call, so that
 *  `vi.useFakeTimers()` installed after import still takes effect. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // Protocol timers never keep the process alive on their own.
    t.unref();
    return t;
  },
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
