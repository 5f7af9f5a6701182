// When a delivery is tried again (issue 25 item 4): exponential back-off
// with jitter (the base, by default 5 s, then 10 s, 20 s … capped at one
// hour, each ±20 %), or the
// receiver's Retry-After (RFC 9110 §10.2.3: seconds or an HTTP date) when it
// asks for longer; never past the retry window counted from the event.

const CAP_MS = 3_600_000;
const JITTER = 0.2;

/** The instant of the next attempt after `attempts` failed ones, or undefined: give up. */
export function nextAttemptAt(o: {
  attempts: number;
  nowMs: number;
  eventAtMs: number;
  windowMs: number;
  /** The first retry's delay. */
  baseMs: number;
  retryAfter?: string | null;
  random?: () => number;
}): number | undefined {
  const exp = Math.min(CAP_MS, o.baseMs * 2 ** Math.max(0, o.attempts - 1));
  const jitter = 1 + JITTER * (2 * (o.random ?? Math.random)() - 1);
  const asked = retryAfterMs(o.retryAfter, o.nowMs);
  const at = o.nowMs + Math.max(Math.round(exp * jitter), asked ?? 0);
  return at <= o.eventAtMs + o.windowMs ? at : undefined;
}

/** Retry-After as milliseconds from `nowMs` (delay-seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^[0-9]{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
