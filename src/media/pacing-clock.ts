import type { MediaClock, MediaTimer } from './media-clock.js';

/**
 * One clock for every session's sending: frame k of slot s is due at
 * t0 + k × frameMs + s × frameMs / slots, an absolute schedule, so timer
 * lateness never accumulates into drift. Sessions are spread over `slots`
 * phases so that hundreds of calls do not send in one burst. A single timer
 * is armed for the next due slot; a slot that comes due within `leadMs` is
 * run at once rather than waiting for one more timer (timers are
 * millisecond-grained and fire late, never early); `poll` runs a due slot
 * from the receive path when the timer would be held up behind I/O. After a stall, up to
 * `maxCatchUpFrames` late frames are sent back to back; beyond that the
 * schedule skips ahead (sessions see the frame index jump and keep their
 * RTP timestamps on the media clock).
 */
export interface PacedTarget {
  /** Called once per frame with the global frame index of its slot. */
  onPacingTick(frameIndex: number): void;
}

export interface PacingClockOptions {
  /** Frame duration in ms (default 20). */
  frameMs?: number;
  /** Phases per frame over which sessions are spread (default 4). */
  slots?: number;
  /** How early a due slot may run instead of arming a timer (default 1 ms). */
  leadMs?: number;
  /** Late frames sent back to back before the schedule skips (default 5). */
  maxCatchUpFrames?: number;
  /** Targets a slot takes before the next slot is opened (default 100). */
  minPerSlot?: number;
}

export interface PacingHandle {
  readonly slot: number;
  index: number;
  readonly target: PacedTarget;
}

export interface PacingClockStats {
  wakeups: number;
  ticks: number;
  skippedTicks: number;
  /** Worst lateness of a tick against its due time, ms (negative: run early, within the lead). */
  maxLateMs: number;
}

/** Histogram of |interval − frameMs| between a target's consecutive frames, 0.05 ms bins. */
export const SPACING_BIN_MS = 0.05;
export const SPACING_BINS = 1000;

/** Counts `ms` in a histogram of SPACING_BIN_MS bins; the last bin holds the overflow. */
export function countInBins(bins: Uint32Array, ms: number): void {
  const bin = Math.round(ms / SPACING_BIN_MS);
  bins[bin < SPACING_BINS ? bin : SPACING_BINS - 1]!++;
}

export class PacingClock {
  readonly frameMs: number;
  private readonly slots: number;
  private readonly slotMs: number;
  private readonly leadMs: number;
  private readonly maxCatchUpTicks: number;
  private readonly minPerSlot: number;
  private readonly members: PacingHandle[][];
  /** The targets of each slot, parallel to `members` (the tick loop reads only these). */
  private readonly targets: PacedTarget[][];
  /** When each target's last frame began, parallel to `targets` (NaN: no interval yet). */
  private readonly startedAt: number[][];
  private count = 0;
  private t0 = 0;
  /** Global tick number (frame × slots + slot) of the next tick to run. */
  private nextTick = 0;
  private timer: MediaTimer | null = null;
  /** A tick is running (a target's handler may poll again: no re-entry). */
  private running = false;
  private readonly spacing = new Uint32Array(SPACING_BINS);
  private readonly counters: PacingClockStats = {
    wakeups: 0,
    ticks: 0,
    skippedTicks: 0,
    maxLateMs: 0,
  };

  constructor(
    private readonly clock: MediaClock,
    options: PacingClockOptions = {},
  ) {
    this.frameMs = options.frameMs ?? 20;
    this.slots = Math.max(1, Math.floor(options.slots ?? 4));
    this.slotMs = this.frameMs / this.slots;
    this.leadMs = options.leadMs ?? 1;
    this.maxCatchUpTicks = (options.maxCatchUpFrames ?? 5) * this.slots;
    this.minPerSlot = Math.max(1, options.minPerSlot ?? 100);
    this.members = Array.from({ length: this.slots }, () => []);
    this.targets = Array.from({ length: this.slots }, () => []);
    this.startedAt = Array.from({ length: this.slots }, () => []);
  }

  get size(): number {
    return this.count;
  }

  stats(): PacingClockStats {
    return { ...this.counters };
  }

  /**
   * Send spacing as the targets saw it: per frame of each target, how far
   * the interval since its previous frame began was from `frameMs` (bins
   * of SPACING_BIN_MS). Taken per target, not per tick, so that a pause in
   * the middle of a slot (a collection, a preempted thread) counts for the
   * packets it held back. `reset` starts a new measurement.
   */
  spacingHistogram(reset = false): Uint32Array {
    const copy = this.spacing.slice();
    if (reset) this.spacing.fill(0);
    return copy;
  }

  /** The frame index the next tick of `slot` will carry (for a session's start). */
  nextFrameIndex(slot: number): number {
    const frame = Math.floor(this.nextTick / this.slots);
    return this.nextTick % this.slots <= slot ? frame : frame + 1;
  }

  /**
   * Adds a target to the least loaded slot; the clock starts with its first
   * target. Slots fill up to `minPerSlot` targets before the next one is
   * opened, so a few calls wake the process once a frame, not `slots` times.
   * A wake-up costs more than a send, and a burst of 100 sends stays well
   * inside the 2 ms spacing budget: 100 rather than 50 took 7–10 % off the
   * CPU per call in media-bench at 100 and 200 calls (README).
   */
  add(target: PacedTarget): PacingHandle {
    const open = Math.min(this.slots, 1 + Math.floor(this.count / this.minPerSlot));
    let slot = 0;
    for (let s = 1; s < open; s++) {
      if (this.members[s]!.length < this.members[slot]!.length) slot = s;
    }
    const list = this.members[slot]!;
    const handle: PacingHandle = { slot, index: list.length, target };
    list.push(handle);
    this.targets[slot]!.push(target);
    this.startedAt[slot]!.push(NaN);
    if (this.count++ === 0) this.start();
    return handle;
  }

  remove(handle: PacingHandle): void {
    const list = this.members[handle.slot]!;
    const targets = this.targets[handle.slot]!;
    const startedAt = this.startedAt[handle.slot]!;
    if (list[handle.index] !== handle) return;
    const last = list.pop()!;
    const lastTarget = targets.pop()!;
    const lastStarted = startedAt.pop()!;
    if (last !== handle) {
      list[handle.index] = last;
      targets[handle.index] = lastTarget;
      startedAt[handle.index] = lastStarted;
      last.index = handle.index;
    }
    handle.index = -1;
    if (--this.count === 0) this.stop();
  }

  private start(): void {
    this.t0 = this.clock.now();
    this.nextTick = 0;
    this.arm();
  }

  private stop(): void {
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
  }

  /**
   * Runs the ticks now due without waiting for the timer. The receive path
   * calls it per packet: the event loop runs timers only between batches of
   * I/O callbacks, so under load a tick would otherwise wait for the whole
   * batch; here it waits for one callback at most.
   */
  poll(now = this.clock.now()): void {
    if (this.running || this.count === 0) return;
    if (this.t0 + this.nextTick * this.slotMs > now + this.leadMs) return;
    this.runDue(now);
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    if (this.count > 0) this.arm(); // for the next due tick, not the one just run
  }

  private readonly wake = (): void => {
    this.timer = null;
    this.counters.wakeups++;
    if (!this.running) this.runDue(this.clock.now());
    if (this.count > 0) this.arm();
  };

  private runDue(now: number): void {
    this.running = true;
    try {
      this.runTicks(now);
    } finally {
      this.running = false;
    }
  }

  private runTicks(now: number): void {
    let due = this.t0 + this.nextTick * this.slotMs;
    if (now - due > this.maxCatchUpTicks * this.slotMs) {
      // RTP keeps its media clock: skip to the tick now due
      const skip = Math.floor((now - due) / this.slotMs);
      this.nextTick += skip;
      this.counters.skippedTicks += skip;
      for (const started of this.startedAt) started.fill(NaN); // a skip is not a spacing sample
      due = this.t0 + this.nextTick * this.slotMs;
    }
    while (due <= now + this.leadMs && this.count > 0) {
      const late = now - due;
      if (late > this.counters.maxLateMs) this.counters.maxLateMs = late;
      const tick = this.nextTick++;
      const slot = tick % this.slots;
      if (this.targets[slot]!.length > 0) this.runSlot(slot, Math.floor(tick / this.slots));
      this.counters.ticks++;
      due = this.t0 + this.nextTick * this.slotMs;
    }
  }

  private runSlot(slot: number, frame: number): void {
    const list = this.targets[slot]!;
    const startedAt = this.startedAt[slot]!;
    // iterate backwards: a target removing itself swaps in one already run
    for (let i = list.length - 1; i >= 0; i--) {
      const t = list[i];
      if (!t) continue;
      const now = this.clock.now();
      const prev = startedAt[i]!;
      if (prev === prev) countInBins(this.spacing, Math.abs(now - prev - this.frameMs));
      startedAt[i] = now;
      t.onPacingTick(frame);
    }
  }

  private arm(): void {
    // no wake-up for a slot nobody is in (count > 0: some slot is not empty)
    while (this.members[this.nextTick % this.slots]!.length === 0) this.nextTick++;
    const due = this.t0 + this.nextTick * this.slotMs;
    const delay = due - this.leadMs - this.clock.now();
    this.timer = this.clock.setTimer(this.wake, delay > 0 ? delay : 0);
  }
}
