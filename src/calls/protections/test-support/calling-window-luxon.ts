// The calling window as it was computed before issue 28: every local day
// walked with luxon. Kept as the oracle that the table-driven walk of
// calling-window.ts must agree with (protections.property.test.ts).
import { DateTime } from 'luxon';
import { blockedDay, type BlockedDayKind, type CallingRules } from '../calling-rules.js';
import { intersectAll, type ActiveRules, type AllowedInstant } from '../calling-window.js';
import { countryDefaultZone, type DestinationZones } from '../destination-zones.js';

type Interval = [number, number];

const DAY_MS = 86_400_000;
const SEARCH_CHUNK_DAYS = 32;
/** Beyond this the rules block every day: failed_to_schedule_call. */
const SEARCH_HORIZON_DAYS = 400;

/**
 * The zones the rules are applied in, or undefined when the number has no
 * zone and the country no default.
 */
export function effectiveZones(
  dest: DestinationZones,
  rules: CallingRules,
  from: number,
  active: ActiveRules,
): { zones: string[]; source: 'number' | 'default' } | undefined {
  const fallback = rules.defaultZone ?? countryDefaultZone(dest.country);
  if (dest.zones.length === 0)
    return fallback ? { zones: [fallback], source: 'default' } : undefined;
  if (dest.zones.length === 1 || !active.time) return { zones: [...dest.zones], source: 'number' };
  // DESIGN: no common hour across the zones → the default zone decides.
  const timeOnly: ActiveRules = { time: true, day: false };
  const common = intersectAll(
    dest.zones.map((z) => zoneIntervals(z, rules, timeOnly, from, from + 2 * DAY_MS)),
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
): AllowedInstant | undefined {
  const chosen = effectiveZones(dest, rules, from, active);
  if (!active.time && !active.day) {
    return { at: from, zones: chosen?.zones ?? [], zoneSource: chosen?.source ?? 'number' };
  }
  if (!chosen) return undefined;
  const base = { zones: chosen.zones, zoneSource: chosen.source };
  for (let day = 0; day < SEARCH_HORIZON_DAYS; day += SEARCH_CHUNK_DAYS) {
    const a = from + day * DAY_MS;
    const b = a + SEARCH_CHUNK_DAYS * DAY_MS;
    const common = intersectAll(chosen.zones.map((z) => zoneIntervals(z, rules, active, a, b)));
    const hit = common.find(([, e]) => e > from);
    if (hit) {
      const at = Math.max(hit[0], from);
      if (at === from) return { at, ...base };
      const blocked = active.day ? firstBlockedDay(chosen.zones, rules, from) : undefined;
      return blocked
        ? { at, ...base, reason: 'blocked_day', blockedDay: blocked }
        : { at, ...base, reason: 'outside_calling_hours' };
    }
  }
  return undefined;
}

/** Why the local date of `at` is blocked in any of the zones, if it is. */
function firstBlockedDay(
  zones: readonly string[],
  rules: CallingRules,
  at: number,
): BlockedDayKind | undefined {
  for (const zone of zones) {
    const local = DateTime.fromMillis(at, { zone });
    const kind = blockedDay(rules, local.toISODate()!, local.weekday);
    if (kind) return kind;
  }
  return undefined;
}

/** Allowed UTC intervals in one zone covering [a, b), sorted and merged. */
export function zoneIntervals(
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
      const prev = out[out.length - 1];
      if (e > s) {
        if (prev && prev[1] >= s) prev[1] = Math.max(prev[1], e);
        else out.push([s, e]);
      }
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
