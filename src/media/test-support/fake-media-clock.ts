import type { MediaClock, MediaTimer } from '../media-clock.js';

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** A MediaClock whose time moves only when a test calls `advance`. */
export class FakeMediaClock implements MediaClock {
  private t = 0;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  constructor(private readonly wallOffsetMs = 1_700_000_000_000) {}

  now(): number {
    return this.t;
  }

  wallNow(): number {
    return this.wallOffsetMs + this.t;
  }

  setTimer(fn: () => void, delayMs: number): MediaTimer {
    const timer = { id: this.nextId++, at: this.t + Math.max(0, delayMs), fn };
    this.timers.push(timer);
    return { __mediaTimer: true, id: timer.id } as unknown as MediaTimer;
  }

  clearTimer(handle: MediaTimer): void {
    const id = (handle as unknown as { id: number }).id;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Moves time forward by `ms`, firing due timers in order (each at its own time). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: FakeTimer | undefined;
      for (const timer of this.timers) if (!next || timer.at < next.at) next = timer;
      if (!next || next.at > end) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }
}
