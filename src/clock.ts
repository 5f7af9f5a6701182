// Time enters the program only through a Clock, so tests can move it.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.UTC(2026, 0, 5, 12, 0, 0)) {}
  now(): number {
    return this.ms;
  }
  set(ms: number | Date): void {
    this.ms = typeof ms === 'number' ? ms : ms.getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
