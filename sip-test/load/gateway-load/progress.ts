// A one-line progress bar on stderr: phase, step, live calls, counters and
// the time left of the run's budget. Redraws in place on a terminal, prints
// a line every 5 s otherwise (CI logs).
import type { CallTracker } from './call-tracker.js';

export class Progress {
  private label = 'starting';
  private target = 0;
  private placed = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly tty = process.stderr.isTTY;
  private lastLine = 0;

  constructor(
    private readonly tracker: CallTracker,
    private readonly deadline: number,
  ) {
    this.timer = setInterval(() => this.render(), this.tty ? 250 : 1000);
    this.timer.unref();
  }

  step(label: string, target: number): void {
    this.label = label;
    this.target = target;
    this.render(true);
  }

  update(d: { placed?: number }): void {
    this.placed += d.placed ?? 0;
  }

  /** Sleeps, but never past the run's deadline. */
  async sleep(ms: number): Promise<void> {
    const until = Math.min(performance.now() + ms, this.deadline);
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, Math.min(250, until - performance.now())));
    }
  }

  get timeLeftMs(): number {
    return this.deadline - performance.now();
  }

  private render(force = false): void {
    const calls = [...this.tracker.calls.values()];
    const live = calls.filter((c) => c.answeredAt !== undefined && c.endedAt === undefined).length;
    const answered = calls.filter((c) => c.answeredAt !== undefined).length;
    const width = 20;
    const filled = this.target > 0 ? Math.min(width, Math.round((live / this.target) * width)) : 0;
    const bar = '#'.repeat(filled) + '.'.repeat(width - filled);
    const left = Math.max(0, Math.round(this.timeLeftMs / 1000));
    const line =
      `[${bar}] ${this.label.padEnd(22)} live ${String(live).padStart(4)}/${this.target}` +
      `  placed ${this.placed} answered ${answered}  ${left}s left`;
    if (this.tty) process.stderr.write(`\r${line}\x1b[K`);
    else if (force || performance.now() - this.lastLine > 5000) {
      this.lastLine = performance.now();
      process.stderr.write(`${line}\n`);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tty) process.stderr.write('\n');
  }
}
