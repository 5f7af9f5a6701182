// RFC 4028 session timers for a dialog in which we are the UAC: what we ask
// for on the INVITE, how a 2xx or a 422 is read, and the timers that follow.

import type { Clock, TimerHandle } from '../transport/clock.js';

/** RFC 4028 §4: no Min-SE may be below 90 seconds. */
export const MIN_SE_FLOOR = 90;

export interface SessionExpires {
  seconds: number;
  refresher?: 'uac' | 'uas';
}

/** What the UAC asks for (RFC 4028 §7.1); `expiresSeconds` 0 asks for none. */
export interface SessionTimerRequest {
  expiresSeconds: number;
  minSeconds: number;
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

/** Parses a Min-SE value ("90", params ignored); undefined if bad. */
export function parseMinSe(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value.split(';')[0]?.trim());
  return Number.isInteger(seconds) && seconds > 0 ? seconds : undefined;
}

/**
 * The Session-Expires and Min-SE of a new request (RFC 4028 §7.1, §7.4):
 * Min-SE never below 90, the interval never below Min-SE; a 422's Min-SE
 * (`raisedTo`) lifts both. Undefined when timers are not asked for.
 */
export function sessionTimerHeaders(
  req: SessionTimerRequest,
  raisedTo = 0,
): { expires: number; minSe: number } | undefined {
  if (req.expiresSeconds <= 0 && raisedTo <= 0) return undefined;
  const minSe = Math.max(MIN_SE_FLOOR, req.minSeconds, raisedTo);
  return { expires: Math.max(req.expiresSeconds, minSe), minSe };
}

/**
 * RFC 4028 §10: the refresher sends BYE when the interval runs out without a
 * successful refresh; the other side a little earlier, at
 * interval − min(32 s, interval / 3).
 */
export function expiryMs(seconds: number, weRefresh: boolean): number {
  return weRefresh ? seconds * 1000 : (seconds - Math.min(32, seconds / 3)) * 1000;
}

export interface SessionTimerCallbacks {
  /** We are the refresher: send a refresh (re-INVITE or UPDATE) now. */
  refresh(): void;
  /** No successful refresh in time: end the session with BYE (RFC 4028 §10). */
  expired(): void;
}

/**
 * The timers of one session: a refresh at half the interval when we are the
 * refresher (§7.4: "the refresher SHOULD send a refresh at half the session
 * interval"), and always an expiry deadline counted from the last 2xx that
 * set or refreshed the interval. A failed refresh that is worth retrying
 * (491, 5xx) is tried again before the deadline; the deadline itself never
 * moves without a successful refresh.
 */
export class SessionTimer {
  private refreshHandle: TimerHandle | undefined;
  private expiryHandle: TimerHandle | undefined;
  private interval = 0;
  private weRefresh = false;
  private deadline = 0;

  constructor(
    private readonly clock: Clock,
    private readonly cb: SessionTimerCallbacks,
  ) {}

  /** (Re)arms both timers after a 2xx carrying Session-Expires (or a refresh). */
  arm(seconds: number, weRefresh: boolean): void {
    this.stop();
    this.interval = seconds;
    this.weRefresh = weRefresh;
    const expiry = expiryMs(seconds, weRefresh);
    this.deadline = this.clock.now() + expiry;
    this.expiryHandle = this.clock.setTimer(() => {
      this.expiryHandle = undefined;
      this.clearRefresh();
      this.cb.expired();
    }, expiry);
    if (weRefresh) this.scheduleRefresh((seconds * 1000) / 2);
  }

  /** A refresh went through without naming an interval: the same one again. */
  refreshed(): void {
    if (this.interval > 0) this.arm(this.interval, this.weRefresh);
  }

  /**
   * A refresh of ours failed in a way worth another try (491, 5xx): try again
   * after `ms` if that is still before the deadline. Returns false when no
   * retry fits (the expiry then ends the session).
   */
  retryRefresh(ms: number): boolean {
    if (!this.weRefresh || this.expiryHandle === undefined) return false;
    if (this.clock.now() + ms >= this.deadline) return false;
    this.scheduleRefresh(ms);
    return true;
  }

  /** The negotiated interval in seconds (0 when none). */
  get seconds(): number {
    return this.interval;
  }

  /** Are we the refresher (meaningful while active)? */
  get refresher(): boolean {
    return this.weRefresh;
  }

  get active(): boolean {
    return this.expiryHandle !== undefined;
  }

  stop(): void {
    this.clearRefresh();
    if (this.expiryHandle !== undefined) this.clock.clearTimer(this.expiryHandle);
    this.expiryHandle = undefined;
  }

  private scheduleRefresh(ms: number): void {
    this.clearRefresh();
    this.refreshHandle = this.clock.setTimer(() => {
      this.refreshHandle = undefined;
      this.cb.refresh();
    }, ms);
  }

  private clearRefresh(): void {
    if (this.refreshHandle !== undefined) this.clock.clearTimer(this.refreshHandle);
    this.refreshHandle = undefined;
  }
}
