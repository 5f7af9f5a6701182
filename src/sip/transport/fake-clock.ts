// A manual clock for state-machine tests: timers fire only when advanced.

import type { Clock, TimerHandle } from './clock.js';

interface Pending {
  at: number;
  fn: () => void;
  id: number;
}

export class FakeClock implements Clock {
  private t = 0;
  private seq = 0;
  private pending: Pending[] = [];

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const p = { at: this.t + Math.max(0, ms), fn, id: ++this.seq };
    this.pending.push(p);
    return p.id;
  }

  clearTimer(handle: TimerHandle): void {
    this.pending = this.pending.filter((p) => p.id !== handle);
  }

  /** Moves time forward, firing due timers in order (including ones they set). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: Pending | undefined;
      for (const p of this.pending)
        if (p.at <= end && (!next || p.at < next.at || (p.at === next.at && p.id < next.id)))
          next = p;
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }

  get timerCount(): number {
    return this.pending.length;
  }
}
