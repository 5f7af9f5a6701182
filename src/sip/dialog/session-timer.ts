// RFC 4028 session timers for a dialog in which we are the UAC.

import type { Clock, TimerHandle } from '../transport/clock.js';

export interface SessionExpires {
  seconds: number;
  refresher?: 'uac' | 'uas';
}

/** Parses a Session-Expires value ("1800;refresher=uac"); undefined if bad. */
export function parseSessionExpires(value: string | undefined): SessionExpires | undefined {
  if (!value) return undefined;
  const [first, ...params] = value.split(';');
  const seconds = Number(first?.trim());
  if (!Number.isInteger(seconds) || seconds <= 0) return undefined;
  let refresher: 'uac' | 'uas' | undefined;
  for (const p of params) {
    const [k, v] = p.split('=').map((x) => x.trim().toLowerCase());
    if (k === 'refresher' && (v === 'uac' || v === 'uas')) refresher = v;
  }
  return { seconds, refresher };
}

export interface SessionTimerCallbacks {
  /** We are the refresher: send a refresh (re-INVITE or UPDATE) now. */
  refresh(): void;
  /** No refresh came in time: end the session with BYE (RFC 4028 §10). */
  expired(): void;
}

export class SessionTimer {
  private handle: TimerHandle | undefined;
  private interval = 0;
  private weRefresh = false;

  constructor(
    private readonly clock: Clock,
    private readonly cb: SessionTimerCallbacks,
  ) {}

  /** (Re)arms the timer after a successful 2xx carrying Session-Expires. */
  arm(seconds: number, weRefresh: boolean): void {
    this.stop();
    this.interval = seconds;
    this.weRefresh = weRefresh;
    if (weRefresh) {
      // RFC 4028 §7.4 / §10: the refresher refreshes at half the interval.
      this.handle = this.clock.setTimer(() => this.cb.refresh(), (seconds * 1000) / 2);
    } else {
      // RFC 4028 §10: BYE at interval - min(32, interval/3) without a refresh.
      const ms = (seconds - Math.min(32, seconds / 3)) * 1000;
      this.handle = this.clock.setTimer(() => this.cb.expired(), ms);
    }
  }

  /** A refresh went through: start the same interval again. */
  refreshed(): void {
    if (this.interval > 0) this.arm(this.interval, this.weRefresh);
  }

  /** The negotiated interval in seconds (0 when not armed yet). */
  get seconds(): number {
    return this.interval;
  }

  get active(): boolean {
    return this.handle !== undefined;
  }

  stop(): void {
    if (this.handle !== undefined) this.clock.clearTimer(this.handle);
    this.handle = undefined;
  }
}
