// The calling window as it was computed before issue 28: every local day
// walked with luxon. Kept as the oracle that the table-driven walk of
// calling-window.ts must agree with (calling-window.oracle.test.ts), and as
// the benchmark's baseline: only the reading of local days is its own.
import { DateTime } from 'luxon';
import { blockedDay, type CallingRules } from '../calling-rules.js';
import * as tables from '../calling-window.js';
import { appendMerged } from '../calling-window.js';
import type { ActiveRules, AllowedInstant, Interval, ZoneCalendar } from '../calling-window.js';
import type { DestinationZones } from '../destination-zones.js';

/**
 * The old walk: each local day from luxon, and the search in 32-day chunks
 * from the start (the shared search of calling-window.ts does the rest).
 */
const LUXON: ZoneCalendar = {
  intervals: (zone, rules, active, a, b) => zoneIntervals(zone, rules, active, a, b),
  blockedDayAt: (zone, rules, at) => {
    const local = DateTime.fromMillis(at, { zone });
    return blockedDay(rules, local.toISODate()!, local.weekday);
  },
  firstChunkDays: 32,
};

/** calling-window.ts's effectiveZones on luxon's days. */
export function effectiveZones(
  dest: DestinationZones,
  rules: CallingRules,
  from: number,
  active: ActiveRules,
): ReturnType<typeof tables.effectiveZones> {
  return tables.effectiveZones(dest, rules, from, active, LUXON);
}

/** calling-window.ts's nextAllowedInstant on luxon's days. */
export function nextAllowedInstant(
  dest: DestinationZones,
  from: number,
  rules: CallingRules,
  active: ActiveRules,
): AllowedInstant | undefined {
  return tables.nextAllowedInstant(dest, from, rules, active, LUXON);
}

/** Allowed UTC intervals in one zone covering [a, b), sorted and merged. */
function zoneIntervals(
  zone: string,
  rules: CallingRules,
  active: ActiveRules,
  a: number,
  b: number,
): Interval[] {
  const out: Interval[] = [];
  let day = DateTime.fromMillis(a, { zone }).startOf('day').minus({ days: 1 });
  const last = DateTime.fromMillis(b, { zone }).startOf('day');
  while (day <= last) {
    const next = day.plus({ days: 1 }).startOf('day');
    if (!active.day || !blockedDay(rules, day.toISODate()!, day.weekday)) {
      const s = active.time ? localMinute(day, next, rules.startMinute) : day.toMillis();
      const e = active.time ? localMinute(day, next, rules.endMinute) : next.toMillis();
      appendMerged(out, s, e);
    }
    day = next;
  }
  return out;
}

/** The instant of a local minute of `day` (a DST gap moves it forward, as luxon does). */
function localMinute(day: DateTime, next: DateTime, minute: number): number {
  if (minute >= 1440) return next.toMillis();
  return day.set({ hour: Math.floor(minute / 60), minute: minute % 60 }).toMillis();
}
