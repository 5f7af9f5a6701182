// Table tests of the time-of-day and day rules (spec §4.1 rules 3-4, §8;
// DESIGN "Time window", "Zones of a number", "Day rule"). Every expected
// decision is written out: allow, or schedule at an exact instant, in which
// zones. Dates are 2026: US DST 8 Mar / 1 Nov, EU DST 29 Mar / 25 Oct.
import { describe, expect, it } from 'vitest';
import type { CompanySettings } from '../../model/entities.js';
import { countryWeekend } from './calling-rules.js';
import { resolveDestinationZones, ownCountryZones } from './destination-zones.js';
import { applyTimeAndDayRules } from './evaluate-protections.js';

const NY = '+12125551234';
const LA = '+13105551234';
const LONDON = '+442071234567';
const ATHENS = '+302101234567';
const SYDNEY = '+61291234567';
const TEL_AVIV = '+97235550100';
const DUBAI = '+97145550100';
/** South Dakota: Mountain (Denver) and Central (North_Dakota/Center). */
const SD = '+16055550100';
/** Idaho: Mountain (Boise) and Pacific (Los_Angeles). */
const IDAHO = '+12085550100';
const TOLL_FREE = '+18005551234';
/** Newfoundland: the data also lists Puerto Rico for +1 709. */
const NEWFOUNDLAND = '+17095550100';

interface Row {
  name: string;
  number: string;
  from: string;
  expect: 'allow' | string;
  reason?: string;
  zones: string[];
  overrideTime?: boolean;
  overrideDay?: boolean;
  settings?: CompanySettings;
  zoneSource?: 'number' | 'default';
}

const US_ALL = [
  'America/Adak',
  'America/Anchorage',
  'America/Boise',
  'America/Chicago',
  'America/Denver',
  'America/Juneau',
  'America/Los_Angeles',
  'America/New_York',
  'America/North_Dakota/Center',
  'America/Phoenix',
  'Pacific/Honolulu',
];

const TABLE: Row[] = [
  // prettier-ignore
  { name: 'New York, Tue 10:00 EDT', number: NY, from: '2026-03-10T14:00:00Z', expect: 'allow', zones: ['America/New_York'] },
  {
    name: 'New York, Tue 08:00 EDT → 09:00',
    number: NY,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T13:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
  },
  {
    name: 'New York, Mon 21:00 EDT (end exclusive) → Tue 09:00',
    number: NY,
    from: '2026-03-10T01:00:00Z',
    expect: '2026-03-10T13:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
  },
  {
    name: 'New York, Mon 20:59 EDT',
    number: NY,
    from: '2026-03-10T00:59:00Z',
    expect: 'allow',
    zones: ['America/New_York'],
  },
  {
    name: 'Los Angeles, Tue 05:00 PDT → 09:00',
    number: LA,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T16:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/Los_Angeles'],
  },
  {
    name: 'London, Tue 22:00 GMT → Wed 09:00',
    number: LONDON,
    from: '2026-03-10T22:00:00Z',
    expect: '2026-03-11T09:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/London'],
  },
  {
    name: 'London, Sat 10:00 → Mon 09:00',
    number: LONDON,
    from: '2026-03-14T10:00:00Z',
    expect: '2026-03-16T09:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Europe/London'],
  },
  {
    name: 'Athens, Tue 24 Mar 22:00 EET → 26 Mar (25 Mar national holiday)',
    number: ATHENS,
    from: '2026-03-24T20:00:00Z',
    expect: '2026-03-26T07:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/Athens'],
  },
  {
    name: 'Athens, 25 Mar 12:00 (holiday) → 26 Mar 09:00',
    number: ATHENS,
    from: '2026-03-25T10:00:00Z',
    expect: '2026-03-26T07:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Europe/Athens'],
  },
  {
    name: 'Sydney, Tue 23:00 AEDT → Wed 09:00',
    number: SYDNEY,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T22:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Australia/Sydney'],
  },
  {
    name: 'Tel Aviv, Fri 10:00 (weekend Fri-Sat) → Sun 09:00',
    number: TEL_AVIV,
    from: '2026-03-13T08:00:00Z',
    expect: '2026-03-15T07:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Asia/Jerusalem'],
  },
  {
    name: 'Tel Aviv, Sun 10:00 is a working day',
    number: TEL_AVIV,
    from: '2026-03-15T08:00:00Z',
    expect: 'allow',
    zones: ['Asia/Jerusalem'],
  },
  {
    name: 'Dubai, Fri 12:00 is a working day (weekend Sat-Sun)',
    number: DUBAI,
    from: '2026-03-13T08:00:00Z',
    expect: 'allow',
    zones: ['Asia/Dubai'],
  },
  {
    name: 'Dubai, Tue 23:00 GST → Wed 09:00',
    number: DUBAI,
    from: '2026-03-10T19:00:00Z',
    expect: '2026-03-11T05:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Asia/Dubai'],
  },
  {
    name: 'South Dakota +1 605: 09:30 CDT but 08:30 MDT → 09:00 MDT',
    number: SD,
    from: '2026-03-10T14:30:00Z',
    expect: '2026-03-10T15:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/Denver', 'America/North_Dakota/Center'],
  },
  {
    name: 'South Dakota +1 605: 20:30 MDT but 21:30 CDT → next 09:00 MDT',
    number: SD,
    from: '2026-03-11T02:30:00Z',
    expect: '2026-03-11T15:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/Denver', 'America/North_Dakota/Center'],
  },
  {
    name: 'Idaho +1 208: 09:30 MDT but 08:30 PDT → 09:00 PDT',
    number: IDAHO,
    from: '2026-03-10T15:30:00Z',
    expect: '2026-03-10T16:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/Boise', 'America/Los_Angeles'],
  },
  {
    name: 'Toll-free +1 800: US zones only, 09:00 Honolulu',
    number: TOLL_FREE,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T19:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: US_ALL,
  },
  {
    name: 'Newfoundland +1 709: judged in St_Johns (not Puerto Rico)',
    number: NEWFOUNDLAND,
    from: '2026-03-10T12:00:00Z',
    expect: 'allow',
    zones: ['America/St_Johns'],
  },
  // DST, US spring (Sun 8 Mar): Sat evening EST → Mon 09:00 EDT.
  {
    name: 'US spring DST: Sat 10:00 EST → Mon 09:00 EDT',
    number: NY,
    from: '2026-03-07T15:00:00Z',
    expect: '2026-03-09T13:00:00.000Z',
    reason: 'blocked_day',
    zones: ['America/New_York'],
  },
  {
    name: 'US spring DST day (day rule overridden): 08:30 EDT → 09:00 EDT',
    number: NY,
    from: '2026-03-08T12:30:00Z',
    expect: '2026-03-08T13:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
    overrideDay: true,
  },
  {
    name: 'US day before spring DST (day overridden): 08:30 EST → 09:00 EST',
    number: NY,
    from: '2026-03-07T13:30:00Z',
    expect: '2026-03-07T14:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
    overrideDay: true,
  },
  // DST, US autumn (Sun 1 Nov).
  {
    name: 'US autumn DST: Sat 11:00 EDT → Mon 09:00 EST',
    number: NY,
    from: '2026-10-31T15:00:00Z',
    expect: '2026-11-02T14:00:00.000Z',
    reason: 'blocked_day',
    zones: ['America/New_York'],
  },
  {
    name: 'US autumn DST day (day overridden): 21:30 EST → Mon 09:00 EST',
    number: NY,
    from: '2026-11-02T02:30:00Z',
    expect: '2026-11-02T14:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
    overrideDay: true,
  },
  // DST, EU spring (Sun 29 Mar) and autumn (Sun 25 Oct).
  {
    name: 'EU spring DST: London Fri 21:30 GMT → Mon 09:00 BST',
    number: LONDON,
    from: '2026-03-27T21:30:00Z',
    expect: '2026-03-30T08:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/London'],
  },
  {
    name: 'EU spring DST: Athens Fri 23:30 EET → Mon 09:00 EEST',
    number: ATHENS,
    from: '2026-03-27T21:30:00Z',
    expect: '2026-03-30T06:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/Athens'],
  },
  {
    name: 'EU spring DST day (day overridden): London 08:30 BST → 09:00 BST',
    number: LONDON,
    from: '2026-03-29T07:30:00Z',
    expect: '2026-03-29T08:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/London'],
    overrideDay: true,
  },
  {
    name: 'EU autumn DST: London Sat → Mon 09:00 GMT',
    number: LONDON,
    from: '2026-10-24T12:00:00Z',
    expect: '2026-10-26T09:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Europe/London'],
  },
  {
    name: 'EU autumn DST day (day overridden): London 08:30 GMT → 09:00 GMT',
    number: LONDON,
    from: '2026-10-25T08:30:00Z',
    expect: '2026-10-25T09:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/London'],
    overrideDay: true,
  },
  // Holidays.
  {
    name: 'Christmas, New York (Fri) → Mon 28 Dec 09:00 EST',
    number: NY,
    from: '2026-12-25T15:00:00Z',
    expect: '2026-12-28T14:00:00.000Z',
    reason: 'blocked_day',
    zones: ['America/New_York'],
  },
  {
    name: 'Christmas, Athens (Fri; 26th Sat) → Mon 28 Dec 09:00 EET',
    number: ATHENS,
    from: '2026-12-25T10:00:00Z',
    expect: '2026-12-28T07:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Europe/Athens'],
  },
  {
    name: 'July 4 observed Fri 3 Jul, New York → Mon 6 Jul 09:00 EDT',
    number: NY,
    from: '2026-07-03T14:00:00Z',
    expect: '2026-07-06T13:00:00.000Z',
    reason: 'blocked_day',
    zones: ['America/New_York'],
  },
  // Overrides bypass their own rule only.
  {
    name: 'overrideTimeRestriction: New York Tue 03:00 EDT → allow',
    number: NY,
    from: '2026-03-10T07:00:00Z',
    expect: 'allow',
    zones: ['America/New_York'],
    overrideTime: true,
  },
  {
    name: 'overrideTimeRestriction keeps the day rule: Sat → Mon 00:00 EDT',
    number: NY,
    from: '2026-03-14T15:00:00Z',
    expect: '2026-03-16T04:00:00.000Z',
    reason: 'blocked_day',
    zones: ['America/New_York'],
    overrideTime: true,
  },
  {
    name: 'overrideDayRestriction: London Sat 10:00 → allow',
    number: LONDON,
    from: '2026-03-14T10:00:00Z',
    expect: 'allow',
    zones: ['Europe/London'],
    overrideDay: true,
  },
  {
    name: 'overrideDayRestriction keeps the time rule: Sat 22:00 → Sun 09:00',
    number: LONDON,
    from: '2026-03-14T22:00:00Z',
    expect: '2026-03-15T09:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/London'],
    overrideDay: true,
  },
  {
    name: 'both overrides: London Sun 03:00 → allow',
    number: LONDON,
    from: '2026-03-15T03:00:00Z',
    expect: 'allow',
    zones: ['Europe/London'],
    overrideDay: true,
    overrideTime: true,
  },
  // Company settings (callingRules).
  {
    name: 'GR window 10:00-18:00: 09:30 → 10:00',
    number: ATHENS,
    from: '2026-03-10T07:30:00Z',
    expect: '2026-03-10T08:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['Europe/Athens'],
    settings: { callingRules: { GR: { window: { start: '10:00', end: '18:00' } } } },
  },
  {
    name: 'default window 08:00-20:00 applies to GB',
    number: LONDON,
    from: '2026-03-10T08:30:00Z',
    expect: 'allow',
    zones: ['Europe/London'],
    settings: { callingRules: { default: { window: { start: '08:00', end: '20:00' } } } },
  },
  {
    name: 'GR blockHolidays false: 25 Mar allowed',
    number: ATHENS,
    from: '2026-03-25T10:00:00Z',
    expect: 'allow',
    zones: ['Europe/Athens'],
    settings: { callingRules: { GR: { blockHolidays: false } } },
  },
  {
    name: 'GB weekendDays [7] only: Saturday allowed',
    number: LONDON,
    from: '2026-03-14T10:00:00Z',
    expect: 'allow',
    zones: ['Europe/London'],
    settings: { callingRules: { GB: { weekendDays: [7] } } },
  },
  {
    name: 'GB blockWeekends false: Sunday allowed',
    number: LONDON,
    from: '2026-03-15T10:00:00Z',
    expect: 'allow',
    zones: ['Europe/London'],
    settings: { callingRules: { GB: { blockWeekends: false } } },
  },
  {
    name: 'GB extraBlockedDates: Tue 10 Mar → Wed 09:00',
    number: LONDON,
    from: '2026-03-10T10:00:00Z',
    expect: '2026-03-11T09:00:00.000Z',
    reason: 'blocked_day',
    zones: ['Europe/London'],
    settings: { callingRules: { GB: { extraBlockedDates: ['2026-03-10'] } } },
  },
  // No common hour across the zones → the country's default zone decides.
  {
    name: 'toll-free, window 10-14: no common hour → America/New_York',
    number: TOLL_FREE,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T14:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/New_York'],
    zoneSource: 'default',
    settings: { callingRules: { US: { window: { start: '10:00', end: '14:00' } } } },
  },
  {
    name: "toll-free, no common hour, company's US default zone Chicago",
    number: TOLL_FREE,
    from: '2026-03-10T12:00:00Z',
    expect: '2026-03-10T15:00:00.000Z',
    reason: 'outside_calling_hours',
    zones: ['America/Chicago'],
    zoneSource: 'default',
    settings: {
      callingRules: {
        US: { window: { start: '10:00', end: '14:00' }, defaultZone: 'America/Chicago' },
      },
    },
  },
];

describe('time-of-day and day rules (table)', () => {
  for (const row of TABLE) {
    it(row.name, async () => {
      const destination = await resolveDestinationZones(row.number);
      const from = Date.parse(row.from);
      const d = applyTimeAndDayRules(
        {
          settings: row.settings ?? {},
          destination,
          overrideTimeRestriction: row.overrideTime ?? false,
          overrideDayRestriction: row.overrideDay ?? false,
        },
        from,
        from,
      );
      expect(d.zones).toEqual(row.zones);
      expect(d.zoneSource).toBe(row.zoneSource ?? 'number');
      if (row.expect === 'allow') {
        expect(d).toMatchObject({ kind: 'allow', at: new Date(from).toISOString() });
      } else {
        expect(d).toMatchObject({ kind: 'schedule', at: row.expect, reason: row.reason });
      }
    });
  }
});

describe('destination zones', () => {
  it('keeps only the zones of the number’s own country', () => {
    expect(ownCountryZones('CA', ['America/Puerto_Rico', 'America/St_Johns'])).toEqual([
      'America/St_Johns',
    ]);
    expect(ownCountryZones('US', ['Pacific/Guam', 'America/New_York'])).toEqual([
      'America/New_York',
    ]);
  });

  it('falls back to the country default when no zone of the country is listed', () => {
    expect(ownCountryZones('RU', ['Europe/Bucharest'])).toEqual(['Europe/Moscow']);
  });

  it('resolves Australian numbers to Australian zones only (+61 8 spans Adelaide and Perth)', async () => {
    const d = await resolveDestinationZones('+61861234567');
    expect(d.country).toBe('AU');
    expect(d.zones).toEqual(['Australia/Adelaide', 'Australia/Perth']);
  });

  it('weekend days come from CLDR week data', () => {
    expect(countryWeekend('US')).toEqual([6, 7]);
    expect(countryWeekend('IL')).toEqual([5, 6]);
    expect(countryWeekend('AE')).toEqual([6, 7]);
    expect(countryWeekend('IR')).toEqual([5]);
  });

  it('a country weekend is read once; each caller gets its own copy', () => {
    countryWeekend('IL').push(7);
    expect(countryWeekend('IL')).toEqual([5, 6]);
  });
});
