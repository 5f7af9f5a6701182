// The time-of-day and day rules of one destination country (spec §4.1 rule
// 3, §8; DESIGN "Time window", "Day rule"), with the company's settings
// applied. Settings (CompanySettings.callingRules, all keys optional):
//
//   callingRules: {
//     default: { window, weekendDays, blockWeekends, blockHolidays, extraBlockedDates },
//     GR:      { ...same keys, defaultZone },   // ISO 3166-1 alpha-2
//   }
//
// A country's entry wins over `default`, key by key; absent keys take the
// built-in values: window 09:00-21:00, the country's CLDR weekend, weekends
// and public holidays blocked, no extra dates.
import Holidays from 'date-holidays';
import type { CallingRulesSetting, CallingWindow, CompanySettings } from '../../model/entities.js';

export type { CallingRulesSetting, CallingWindow };

/** The rules in force for one country, every value settled. */
export interface CallingRules {
  country: string | null;
  /** Minutes after local midnight: [startMinute, endMinute). */
  startMinute: number;
  endMinute: number;
  weekendDays: readonly number[];
  blockWeekends: boolean;
  blockHolidays: boolean;
  extraBlockedDates: ReadonlySet<string>;
  defaultZone: string | undefined;
}

export const DEFAULT_WINDOW: CallingWindow = { start: '09:00', end: '21:00' };

/** Used when the runtime has no CLDR week data for the country. */
const FALLBACK_WEEKENDS: Readonly<Record<string, number[]>> = {
  AF: [4, 5],
  IR: [5],
  IL: [5, 6],
  SA: [5, 6],
  EG: [5, 6],
  IQ: [5, 6],
  JO: [5, 6],
  KW: [5, 6],
  OM: [5, 6],
  QA: [5, 6],
  BH: [5, 6],
  YE: [5, 6],
  DZ: [5, 6],
  LY: [5, 6],
  SY: [5, 6],
  SD: [5, 6],
  BD: [5, 6],
  IN: [7],
  UG: [7],
};

/** Each country's weekend, read once: CLDR's week data does not change while the daemon runs. */
const weekendCache = new Map<string, readonly number[]>();

/** Weekend days of a country from CLDR week data (`Intl.Locale`). */
export function countryWeekend(country: string | null): number[] {
  if (!country) return [6, 7];
  let days = weekendCache.get(country);
  if (!days) {
    days = cldrWeekend(country);
    weekendCache.set(country, days);
  }
  return [...days];
}

function cldrWeekend(country: string): number[] {
  try {
    const locale = new Intl.Locale(`und-${country}`) as Intl.Locale & {
      weekInfo?: { weekend?: number[] };
      getWeekInfo?: () => { weekend?: number[] };
    };
    // Node 20 has the `weekInfo` getter; later versions `getWeekInfo()`.
    const info = typeof locale.getWeekInfo === 'function' ? locale.getWeekInfo() : locale.weekInfo;
    if (info?.weekend && info.weekend.length > 0) return [...info.weekend];
  } catch {
    // fall through to the table
  }
  return FALLBACK_WEEKENDS[country] ?? [6, 7];
}

/** The rules for `country` under the company's settings. */
export function callingRulesFor(settings: CompanySettings, country: string | null): CallingRules {
  const all: Partial<Record<string, CallingRulesSetting>> = settings.callingRules ?? {};
  const base = all.default ?? {};
  const own = (country ? all[country] : undefined) ?? {};
  const pick = <K extends keyof CallingRulesSetting>(k: K): CallingRulesSetting[K] =>
    own[k] !== undefined ? own[k] : base[k];
  const window = pick('window');
  const start = parseClock(window?.start) ?? parseClock(DEFAULT_WINDOW.start)!;
  const end = parseClock(window?.end) ?? parseClock(DEFAULT_WINDOW.end)!;
  const valid = end > start;
  const weekend = pick('weekendDays');
  return {
    country,
    startMinute: valid ? start : 9 * 60,
    endMinute: valid ? end : 21 * 60,
    weekendDays:
      Array.isArray(weekend) && weekend.every((d) => Number.isInteger(d) && d >= 1 && d <= 7)
        ? weekend
        : countryWeekend(country),
    blockWeekends: pick('blockWeekends') ?? true,
    blockHolidays: pick('blockHolidays') ?? true,
    extraBlockedDates: new Set(
      (pick('extraBlockedDates') ?? []).filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d)),
    ),
    defaultZone: typeof own.defaultZone === 'string' ? own.defaultZone : undefined,
  };
}

/** "HH:mm" → minutes after midnight ("24:00" → 1440); undefined when malformed. */
export function parseClock(text: string | undefined): number | undefined {
  const m = text === undefined ? null : /^(\d{2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const h = Number(m[1]);
  const min = Number(m[2]);
  if (h > 24 || min > 59 || (h === 24 && min !== 0)) return undefined;
  return h * 60 + min;
}

const holidayCache = new Map<string, ReadonlyMap<string, string>>();

/** Public holidays (date-holidays type 'public' only) of a country's year: date → name. */
export function publicHolidays(country: string, year: number): ReadonlyMap<string, string> {
  const key = `${country}:${year}`;
  let days = holidayCache.get(key);
  if (!days) {
    const found = new Map<string, string>();
    try {
      const hd = new Holidays(country, { languages: ['en'] });
      for (const h of hd.getHolidays(year) || []) {
        if (h.type !== 'public') continue;
        // `date` is local ("YYYY-MM-DD hh:mm:ss[ ±hhmm]"): the holiday's own day.
        found.set(h.date.slice(0, 10), h.name);
      }
    } catch {
      // an unknown country has no holidays
    }
    days = found;
    holidayCache.set(key, days);
  }
  return days;
}

export type BlockedDayKind = 'weekend' | 'public_holiday' | 'blocked_date';

/** Why a local date (ISO weekday 1-7, "YYYY-MM-DD") is blocked, or undefined. */
export function blockedDay(
  rules: CallingRules,
  isoDate: string,
  weekday: number,
): BlockedDayKind | undefined {
  if (rules.extraBlockedDates.has(isoDate)) return 'blocked_date';
  if (rules.blockWeekends && rules.weekendDays.includes(weekday)) return 'weekend';
  if (rules.blockHolidays && rules.country) {
    const year = Number(isoDate.slice(0, 4));
    if (publicHolidays(rules.country, year).has(isoDate)) return 'public_holiday';
  }
  return undefined;
}
