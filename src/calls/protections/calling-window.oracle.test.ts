// The table-driven calling window (zone-time.ts, issue 28) gives the answers
// of the luxon walk it replaced (test-support/calling-window-luxon.ts), for
// random zones, instants, windows, weekends, holidays and overrides, and
// above all at DST edges: `from` near a transition and windows whose edges
// are the transition's own wall time (a gap or a repeated hour).
import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import type { CallingRules } from './calling-rules.js';
import { effectiveZones, nextAllowedInstant, type ActiveRules } from './calling-window.js';
import * as oracle from './test-support/calling-window-luxon.js';
import { DAY_MS, ZoneOffsets, isoDateOfDay, weekdayOfDay } from './zone-time.js';

const ALL_ZONES = Intl.supportedValuesOf('timeZone');

/** Zones whose rules are awkward: DST at midnight, half-hour DST, Ramadan DST, far east and west. */
const HARD_ZONES = [
  'America/Santiago',
  'America/Havana',
  'Asia/Beirut',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Africa/Casablanca',
  'America/Asuncion',
  'Asia/Gaza',
  'Antarctica/Troll',
  'America/St_Johns',
  'Europe/London',
  'America/New_York',
  'America/Los_Angeles',
  'Pacific/Apia',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
  'Asia/Tehran',
  'Europe/Chisinau',
  'America/Scoresbysund',
  'Australia/Adelaide',
  'Asia/Kolkata',
  'America/Sao_Paulo',
];

const COUNTRIES = ['US', 'GB', 'IL', 'CL', 'LB', 'CU', 'AU', 'BR', null];

const YEAR_MS = 365.25 * DAY_MS;
const FROM_2024 = Date.UTC(2024, 0, 1);

/** The offset changes of a zone within [a, b), found by luxon alone (to the minute). */
function transitions(zone: string, a: number, b: number): number[] {
  const tz = IANAZone.create(zone);
  const out: number[] = [];
  let prev = tz.offset(a);
  for (let t = a + 6 * 3_600_000; t < b; t += 6 * 3_600_000) {
    const off = tz.offset(t);
    if (off !== prev) {
      let lo = t - 6 * 3_600_000;
      let hi = t;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (tz.offset(mid) === prev) lo = mid;
        else hi = mid;
      }
      out.push(hi);
      prev = off;
    }
  }
  return out;
}

const clock = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 45, 59));

const rulesArb: fc.Arbitrary<CallingRules> = fc
  .record({
    country: fc.constantFrom(...COUNTRIES),
    start: clock,
    span: fc.integer({ min: 1, max: 24 * 60 }),
    weekendDays: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { maxLength: 3 }),
    blockWeekends: fc.boolean(),
    blockHolidays: fc.boolean(),
    extra: fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 4 }),
  })
  .map(({ country, start, span, extra, ...r }) => {
    const startMinute = start[0] * 60 + start[1];
    return {
      country,
      startMinute,
      endMinute: Math.min(1440, startMinute + span),
      weekendDays: r.weekendDays,
      blockWeekends: r.blockWeekends,
      blockHolidays: r.blockHolidays,
      // Offsets in days from 2024-01-01; the instants below fall in 2024-2032.
      extraBlockedDates: new Set(
        extra.map((d) => isoDateOfDay(Math.floor(FROM_2024 / DAY_MS) + d)),
      ),
      defaultZone: undefined,
    };
  });

const activeArb: fc.Arbitrary<ActiveRules> = fc.record({ time: fc.boolean(), day: fc.boolean() });

describe('zone offsets from the table', () => {
  it('equal luxon for any zone and instant (1990-2040), local days and dates included', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_ZONES),
        fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2040, 0, 1) }),
        (zone, ts) => {
          const table = ZoneOffsets.of(zone)!;
          const dt = DateTime.fromMillis(ts, { zone });
          expect(table.offsetAt(ts)).toBe(dt.offset);
          const day = table.localDayOf(ts);
          expect(isoDateOfDay(day)).toBe(dt.toISODate());
          expect(weekdayOfDay(day)).toBe(dt.weekday);
        },
      ),
      { seed: 28, numRuns: 3000 },
    );
  });

  it('equal luxon one second either side of every transition of the hard zones, 2024-2032', () => {
    for (const zone of HARD_ZONES) {
      const table = ZoneOffsets.of(zone)!;
      const tz = IANAZone.create(zone);
      for (const t of transitions(zone, FROM_2024, FROM_2024 + 8 * YEAR_MS)) {
        for (const at of [t - 1000, t - 1, t, t + 1000])
          expect(table.offsetAt(at)).toBe(tz.offset(at));
      }
    }
  });

  it('knows no offset for a zone that is not an IANA name', () => {
    expect(ZoneOffsets.of('Mars/Olympus_Mons')).toBeUndefined();
  });

  it('dates days before 1970 and across leap years like the Date object', () => {
    for (const day of [-719_468, -1, 0, 59, 365 + 59, 11_016, 19_782, 20_513, 2_932_896]) {
      expect(isoDateOfDay(day)).toBe(new Date(day * DAY_MS).toISOString().slice(0, 10));
    }
  });
});

describe('the calling window from the table agrees with the luxon walk', () => {
  it('for random zones, rules, overrides and instants (2024-2032)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...HARD_ZONES, ...ALL_ZONES.slice(0, 40)), {
          minLength: 1,
          maxLength: 3,
        }),
        rulesArb,
        activeArb,
        fc.integer({ min: FROM_2024, max: FROM_2024 + 8 * YEAR_MS }),
        (zones, rules, active, from) => {
          const dest = { country: rules.country, zones };
          expect(nextAllowedInstant(dest, from, rules, active)).toEqual(
            oracle.nextAllowedInstant(dest, from, rules, active),
          );
        },
      ),
      { seed: 2028, numRuns: 600 },
    );
  });

  it('at DST edges: from near a transition, windows starting or ending at its wall time', () => {
    const edges = HARD_ZONES.flatMap((zone) =>
      transitions(zone, FROM_2024, FROM_2024 + 3 * YEAR_MS).map((t) => ({ zone, t })),
    );
    expect(edges.length).toBeGreaterThan(60);
    fc.assert(
      fc.property(
        fc.constantFrom(...edges),
        fc.integer({ min: -26 * 60, max: 26 * 60 }),
        fc.constantFrom(-60, -30, -1, 0, 1, 30, 60),
        fc.boolean(),
        rulesArb,
        activeArb,
        ({ zone, t }, fromMinutes, edgeShift, edgeIsStart, rules, active) => {
          const wall = DateTime.fromMillis(t, { zone });
          const edge = (wall.hour * 60 + wall.minute + edgeShift + 1440) % 1440;
          const windowed: CallingRules = edgeIsStart
            ? { ...rules, startMinute: edge, endMinute: Math.max(edge + 1, rules.endMinute) }
            : { ...rules, startMinute: Math.min(edge - 1, rules.startMinute), endMinute: edge };
          if (windowed.startMinute < 0 || windowed.endMinute > 1440) return;
          const dest = { country: rules.country, zones: [zone] };
          const from = t + fromMinutes * 60_000;
          expect(nextAllowedInstant(dest, from, windowed, active)).toEqual(
            oracle.nextAllowedInstant(dest, from, windowed, active),
          );
        },
      ),
      { seed: 4733, numRuns: 1500 },
    );
  });

  it('chooses the same zones for numbers with many of them (a +1 800 number)', () => {
    const usZones = ALL_ZONES.filter((z) => z.startsWith('America/')).slice(0, 42);
    fc.assert(
      fc.property(
        fc.subarray(usZones, { minLength: 2, maxLength: 12 }),
        rulesArb,
        activeArb,
        fc.integer({ min: FROM_2024, max: FROM_2024 + 8 * YEAR_MS }),
        (zones, rules, active, from) => {
          const dest = { country: 'US', zones };
          expect(effectiveZones(dest, rules, from, active)).toEqual(
            oracle.effectiveZones(dest, rules, from, active),
          );
        },
      ),
      { seed: 800, numRuns: 200 },
    );
  });
});
