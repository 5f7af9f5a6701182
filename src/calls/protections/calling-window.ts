// When a call to a destination may be placed (spec §4.1 rules 3-4, §8;
// DESIGN "Time window", "Zones of a number"): inside [start, end) local time
// and on a day that is not blocked, in EVERY zone of the number; when those
// zones share no calling hour, in the country's default zone alone. Local
// days are walked on each zone's table of offsets (zone-time.ts), so DST
// changes move the window's UTC edges; a decision costs microseconds.
import { blockedDay, type BlockedDayKind, type CallingRules } from './calling-rules.js';
import { countryDefaultZone, type DestinationZones } from './destination-zones.js';
import { DAY_MS, MINUTE_MS, ZoneOffsets, isoDateOfDay, weekdayOfDay } from './zone-time.js';

/** Which rules are in force (an override switches its own rule off). */
export interface ActiveRules {
  time: boolean;
  day: boolean;
}

export type ScheduleReason = 'outside_calling_hours' | 'blocked_day';

export interface AllowedInstant {
  /** Unix ms: the earliest allowed instant ≥ `from`. */
  at: number;
  /** Zones the decision was made in. */
  zones: string[];
  /** 'number': the number's own zones; 'default': the country's default zone decided. */
  zoneSource: 'number' | 'default';
  /** Set when `at` > `from`: why `from` itself was not allowed. */
  reason?: ScheduleReason;
  blockedDay?: BlockedDayKind;
}

export type Interval = [number, number];

/**
 * How the search reads local days: zone-time's tables here; the luxon walk
 * this replaced in the test oracle (test-support/calling-window-luxon.ts).
 */
export interface ZoneCalendar {
  /** Allowed UTC intervals in one zone covering [a, b), sorted and merged. */
  intervals(
    zone: string,
    rules: CallingRules,
    active: ActiveRules,
    a: number,
    b: number,
  ): Interval[];
  /** Why the local date of `at` in `zone` is blocked, if it is. */
  blockedDayAt(zone: string, rules: CallingRules, at: number): BlockedDayKind | undefined;
  /** Days in the search's first chunk. */
  firstChunkDays: number;
}

/** Most calls are allowed within a day or two: the first chunk is short. */
const FIRST_CHUNK_DAYS = 3;
const SEARCH_CHUNK_DAYS = 32;
/** Beyond this the rules block every day: failed_to_schedule_call. */
export const SEARCH_HORIZON_DAYS = 400;
/** The search covers whole 32-day chunks: [from, from + 416 days). */
const SEARCH_END_MS =
  Math.ceil(SEARCH_HORIZON_DAYS / SEARCH_CHUNK_DAYS) * SEARCH_CHUNK_DAYS * DAY_MS;

/**
 * The zones the rules are applied in, or undefined when the number has no
 * zone and the country no default.
 */
export function effectiveZones(
  dest: DestinationZones,
  rules: CallingRules,
  from: number,
  active: ActiveRules,
  calendar: ZoneCalendar = TABLES,
): { zones: string[]; source: 'number' | 'default' } | undefined {
  const fallback = rules.defaultZone ?? countryDefaultZone(dest.country);
  if (dest.zones.length === 0)
    return fallback ? { zones: [fallback], source: 'default' } : undefined;
  if (dest.zones.length === 1 || !active.time) return { zones: [...dest.zones], source: 'number' };
  // DESIGN: no common hour across the zones → the default zone decides.
  const timeOnly: ActiveRules = { time: true, day: false };
  const common = intersectAll(
    dest.zones.map((z) => calendar.intervals(z, rules, timeOnly, from, from + 2 * DAY_MS)),
  );
  if (common.some(([s, e]) => e > from && s < from + 2 * DAY_MS)) {
    return { zones: [...dest.zones], source: 'number' };
  }
  return { zones: [fallback ?? dest.zones[0]!], source: 'default' };
}

/**
 * The earliest instant ≥ `from` at which every active rule allows a call to
 * the destination; undefined when no such instant exists within
 * SEARCH_HORIZON_DAYS or the destination has no zone.
 */
export function nextAllowedInstant(
  dest: DestinationZones,
  from: number,
  rules: CallingRules,
  active: ActiveRules,
  calendar: ZoneCalendar = TABLES,
): AllowedInstant | undefined {
  const chosen = effectiveZones(dest, rules, from, active, calendar);
  if (!active.time && !active.day) {
    return { at: from, zones: chosen?.zones ?? [], zoneSource: chosen?.source ?? 'number' };
  }
  if (!chosen) return undefined;
  const base = { zones: chosen.zones, zoneSource: chosen.source };
  const end = from + SEARCH_END_MS;
  for (let a = from, days = calendar.firstChunkDays; a < end; days = SEARCH_CHUNK_DAYS) {
    const b = Math.min(a + days * DAY_MS, end);
    const common = intersectAll(
      chosen.zones.map((z) => calendar.intervals(z, rules, active, a, b)),
    );
    const hit = common.find(([, e]) => e > from);
    if (hit) {
      const at = Math.max(hit[0], from);
      if (at === from) return { at, ...base };
      const blocked = active.day ? firstBlockedDay(calendar, chosen.zones, rules, from) : undefined;
      return blocked
        ? { at, ...base, reason: 'blocked_day', blockedDay: blocked }
        : { at, ...base, reason: 'outside_calling_hours' };
    }
    a = b;
  }
  return undefined;
}

/** Why the local date of `at` is blocked in any of the zones, if it is. */
function firstBlockedDay(
  calendar: ZoneCalendar,
  zones: readonly string[],
  rules: CallingRules,
  at: number,
): BlockedDayKind | undefined {
  for (const zone of zones) {
    const kind = calendar.blockedDayAt(zone, rules, at);
    if (kind) return kind;
  }
  return undefined;
}

const TABLES: ZoneCalendar = {
  intervals: (zone, rules, active, a, b) => zoneIntervals(zone, rules, active, a, b),
  blockedDayAt: (zone, rules, at) => {
    const day = ZoneOffsets.of(zone)?.localDayOf(at);
    return day === undefined ? undefined : blockedDay(rules, isoDateOfDay(day), weekdayOfDay(day));
  },
  firstChunkDays: FIRST_CHUNK_DAYS,
};

/**
 * Allowed UTC intervals in one zone covering [a, b), sorted and merged. The
 * local days from the day before `a` to the day of `b` are walked; each
 * day's edges are its wall times [start, end), or its midnights when the
 * time rule is off.
 */
export function zoneIntervals(
  zone: string,
  rules: CallingRules,
  active: ActiveRules,
  a: number,
  b: number,
): Interval[] {
  const out: Interval[] = [];
  const tz = ZoneOffsets.of(zone);
  if (!tz) return out;
  const lastDay = tz.localDayOf(b);
  let day = tz.localDayOf(a) - 1;
  let start = tz.instantOf(day * DAY_MS, tz.offsetAt(a));
  for (; day <= lastDay; day++) {
    const next = nextMidnight(tz, day, start);
    if (!active.day || !blockedDay(rules, isoDateOfDay(day), weekdayOfDay(day))) {
      const s = active.time ? wallTime(tz, day, start, next, rules.startMinute) : start.ts;
      const e = active.time ? wallTime(tz, day, start, next, rules.endMinute) : next.ts;
      appendMerged(out, s, e);
    }
    start = next;
  }
  return out;
}

type Instant = { ts: number; offset: number };

/**
 * The start of the local day after `day`, whose own start is `start`: the
 * same wall time a day later, then back to its midnight (luxon's
 * `plus({ days: 1 }).startOf('day')`; a midnight in a DST gap is the first
 * instant after it).
 */
function nextMidnight(tz: ZoneOffsets, day: number, start: Instant): Instant {
  const wall = start.ts + start.offset * MINUTE_MS - day * DAY_MS;
  const later = tz.instantOf((day + 1) * DAY_MS + wall, start.offset);
  return tz.instantOf((day + 1) * DAY_MS, later.offset);
}

/** The instant of a local minute of `day` (a DST gap moves it forward). */
function wallTime(
  tz: ZoneOffsets,
  day: number,
  start: Instant,
  next: Instant,
  minute: number,
): number {
  if (minute >= 1440) return next.ts;
  return tz.instantOf(day * DAY_MS + minute * MINUTE_MS, start.offset).ts;
}

/** Appends [s, e) to sorted intervals, merged with the last when they touch; an empty one is dropped. */
export function appendMerged(out: Interval[], s: number, e: number): void {
  if (e <= s) return;
  const prev = out[out.length - 1];
  if (prev && prev[1] >= s) prev[1] = Math.max(prev[1], e);
  else out.push([s, e]);
}

export function intersectAll(lists: Interval[][]): Interval[] {
  let acc = lists[0] ?? [];
  for (const list of lists.slice(1)) acc = intersect(acc, list);
  return acc;
}

function intersect(x: Interval[], y: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    const [xs, xe] = x[i]!;
    const [ys, ye] = y[j]!;
    const s = Math.max(xs, ys);
    const e = Math.min(xe, ye);
    if (e > s) out.push([s, e]);
    if (xe < ye) i++;
    else j++;
  }
  return out;
}
