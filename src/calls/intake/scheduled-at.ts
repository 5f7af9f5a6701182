// The request's `scheduledAt` (spec §2.1): an instant, or a wall-clock time
// at the destination. DESIGN "Ambiguities in the spec, settled": a
// `scheduledAt` without an offset is local time in the destination's zone
// (the zone the protections use for that number). Parsing needs no zone;
// resolving to an instant does, and happens once that zone is known.
import { DateTime, IANAZone } from 'luxon';

/**
 * What the request asked for. `instant`: sent with `Z` or an offset, `at` is
 * its ISO 8601 form in UTC (`2026-05-04T08:30:00.000Z`). `local`: sent
 * without an offset, `local` is the wall-clock time normalised to
 * `YYYY-MM-DDTHH:mm:ss.SSS`, still to be read in the destination's zone.
 */
export type RequestedSchedule = { kind: 'instant'; at: string } | { kind: 'local'; local: string };

/** Why a text is not a `scheduledAt`: the shape, the calendar, or the offset. */
export type ScheduleProblem = 'format' | 'date' | 'offset';

export type ScheduleParse =
  { ok: true; value: RequestedSchedule } | { ok: false; problem: ScheduleProblem };

/**
 * `YYYY-MM-DDTHH:mm[:ss[.fraction]]` then an optional offset: `Z`, `±hh:mm`,
 * `±hhmm` or `±hh` (ISO 8601; RFC 3339 plus its basic forms). Fractions of
 * up to 9 digits are accepted (Python sends microseconds) and kept to the
 * millisecond.
 */
const DATE_TIME =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const OFFSET = /^[+-](\d{2})(?::?(\d{2}))?$/;
const LOCAL_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSS";

export function parseRequestedSchedule(text: string): ScheduleParse {
  const match = DATE_TIME.exec(text);
  if (!match) return { ok: false, problem: 'format' };
  const [, wallClock = '', offset] = match;
  if (offset !== undefined && !offsetInRange(offset)) return { ok: false, problem: 'offset' };
  // Calendar and clock ranges (2026-02-30, 10:61, 23:59:60) are luxon's
  // check; 24:00 is ISO 8601's end of day and reads as the next day's 00:00.
  const wall = DateTime.fromISO(wallClock, { zone: 'UTC' });
  if (!wall.isValid) return { ok: false, problem: 'date' };
  if (offset === undefined)
    return { ok: true, value: { kind: 'local', local: wall.toFormat(LOCAL_FORMAT) } };
  const instant = DateTime.fromISO(text, { setZone: true }).toUTC().toISO();
  return instant === null
    ? { ok: false, problem: 'date' }
    : { ok: true, value: { kind: 'instant', at: instant } };
}

/** RFC 3339 time-numoffset: hours 00-23, minutes 00-59 (luxon takes +25:00). */
function offsetInRange(offset: string): boolean {
  if (offset === 'Z' || offset === 'z') return true;
  const [, hours = '', minutes = '00'] = OFFSET.exec(offset) ?? [];
  return Number(hours) <= 23 && Number(minutes) <= 59;
}

/**
 * The instant a requested schedule means. An `instant` is returned as sent
 * (no zone). A `local` time is read in `zone`, an IANA name (the zone the
 * protections use for the destination), and the zone is returned with it:
 * - a time that exists once is that instant;
 * - a time that exists twice (the hour repeated when clocks go back) is the
 *   earlier of the two (luxon alone would take the later one);
 * - a time that does not exist (the hour skipped when clocks go forward) is
 *   moved forward to the first instant that exists, the moment the clocks
 *   jump: 02:30 on 2026-03-08 in America/New_York is 03:00 EDT (luxon alone
 *   would give 03:30 EDT, the RFC 5545 / Temporal "compatible" reading).
 * Throws a RangeError for an unknown zone or a malformed `local`: both are
 * the caller's mistakes, never the requester's.
 */
export function resolveScheduledAt(
  req: RequestedSchedule,
  zone: string,
): { at: string; zone?: string } {
  if (req.kind === 'instant') return { at: req.at };
  if (!IANAZone.isValidZone(zone)) throw new RangeError(`Unknown time zone "${zone}".`);
  const wall = DateTime.fromISO(req.local, { zone: 'UTC' });
  if (!wall.isValid) throw new RangeError(`"${req.local}" is not a local date-time.`);
  const at = wallClockToInstant(wall.toMillis(), IANAZone.create(zone));
  return { at: new Date(at).toISOString(), zone };
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/**
 * `wallMs` is the wall-clock time counted as if it were UTC. Its possible
 * instants use the offset in force a day before or a day after (a zone
 * changes its offset at most once in two days); a candidate counts when the
 * zone really has that offset then.
 */
function wallClockToInstant(wallMs: number, zone: IANAZone): number {
  const before = zone.offset(wallMs - DAY_MS);
  const after = zone.offset(wallMs + DAY_MS);
  const candidates = [before, after]
    .map((offset) => ({ offset, t: wallMs - offset * MINUTE_MS }))
    .filter(({ offset, t }) => zone.offset(t) === offset)
    .map(({ t }) => t);
  if (candidates.length > 0) return Math.min(...candidates);
  // A gap: read with the later offset the wall time falls before the jump,
  // read with the earlier offset after it. The jump lies in between.
  return firstInstantWithNewOffset(wallMs - after * MINUTE_MS, wallMs - before * MINUTE_MS, zone);
}

/** The first millisecond in (from, to] whose offset differs from `from`'s. */
function firstInstantWithNewOffset(from: number, to: number, zone: IANAZone): number {
  const old = zone.offset(from);
  let lo = from;
  let hi = to;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (zone.offset(mid) === old) lo = mid;
    else hi = mid;
  }
  return hi;
}
