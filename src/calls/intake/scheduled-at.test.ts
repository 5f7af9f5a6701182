// DESIGN "Ambiguities in the spec, settled": a scheduledAt without an offset
// is local time in the destination's zone. Every expected instant is written
// out. 2026 transitions: US 8 Mar 02:00 -> 03:00 and 1 Nov 02:00 -> 01:00;
// EU 29 Mar 02:00 -> 03:00 and 25 Oct 03:00 -> 02:00 (Berlin local).
import { DateTime, Settings, type Zone } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import {
  parseRequestedSchedule,
  resolveScheduledAt,
  type RequestedSchedule,
} from './scheduled-at.js';

const NY = 'America/New_York';
const BERLIN = 'Europe/Berlin';
const TOKYO = 'Asia/Tokyo';
const local = (text: string): RequestedSchedule => ({ kind: 'local', local: text });
const at = (text: string, zone: string): string => resolveScheduledAt(local(text), zone).at;

describe('parseRequestedSchedule', () => {
  const accepted: Array<[string, RequestedSchedule]> = [
    ['2026-05-04T10:30:00Z', { kind: 'instant', at: '2026-05-04T10:30:00.000Z' }],
    ['2026-05-04T10:30z', { kind: 'instant', at: '2026-05-04T10:30:00.000Z' }],
    ['2026-06-11T10:00:00-04:00', { kind: 'instant', at: '2026-06-11T14:00:00.000Z' }],
    ['2026-05-04T10:30+05:30', { kind: 'instant', at: '2026-05-04T05:00:00.000Z' }],
    ['2026-05-04T10:30+0530', { kind: 'instant', at: '2026-05-04T05:00:00.000Z' }],
    ['2026-05-04T10:30+05', { kind: 'instant', at: '2026-05-04T05:30:00.000Z' }],
    ['2026-05-04T10:30-00:00', { kind: 'instant', at: '2026-05-04T10:30:00.000Z' }],
    ['2026-05-04T10:30+23:59', { kind: 'instant', at: '2026-05-03T10:31:00.000Z' }],
    // Python's isoformat(): microseconds, kept to the millisecond.
    ['2026-05-04T10:30:00.123456+00:00', { kind: 'instant', at: '2026-05-04T10:30:00.123Z' }],
    ['2026-11-26T10:00', { kind: 'local', local: '2026-11-26T10:00:00.000' }],
    ['2026-11-26T10:00:00', { kind: 'local', local: '2026-11-26T10:00:00.000' }],
    ['2026-11-26T10:00:07.5', { kind: 'local', local: '2026-11-26T10:00:07.500' }],
    ['2028-02-29T09:15', { kind: 'local', local: '2028-02-29T09:15:00.000' }],
    // ISO 8601's end of day is the next day's start.
    ['2026-05-04T24:00', { kind: 'local', local: '2026-05-05T00:00:00.000' }],
    // A local time in a DST gap is a valid local value; resolving moves it.
    ['2026-03-08T02:30', { kind: 'local', local: '2026-03-08T02:30:00.000' }],
  ];
  it.each(accepted)('%s', (text, expected) => {
    expect(parseRequestedSchedule(text)).toStrictEqual({ ok: true, value: expected });
  });

  const refused: Array<[string, 'format' | 'date' | 'offset']> = [
    ['2026-02-30T10:00', 'date'],
    ['2026-02-29T10:00', 'date'],
    ['2026-13-01T10:00', 'date'],
    ['2026-05-04T25:00', 'date'],
    ['2026-05-04T10:60', 'date'],
    ['2026-05-04T23:59:60Z', 'date'],
    ['2026-02-30T10:00Z', 'date'],
    ['2026-05-04T10:30+25:00', 'offset'],
    ['2026-05-04T10:30+05:60', 'offset'],
    ['2026-05-04', 'format'],
    ['2026-05-04 10:30', 'format'],
    ['2026-05-04T10', 'format'],
    ['2026-05-04T10Z', 'format'],
    ['2026-05-04t10:30', 'format'],
    ['2026-05-04T10:30:00,5', 'format'],
    ['2026-05-04T10:30:00Z[Europe/Berlin]', 'format'],
    ['20260504T103000Z', 'format'],
    [' 2026-05-04T10:30', 'format'],
    ['tomorrow at ten', 'format'],
    ['', 'format'],
  ];
  it.each(refused)('refuses %j (%s)', (text, problem) => {
    expect(parseRequestedSchedule(text)).toStrictEqual({ ok: false, problem });
  });

  describe('never reads a value in the server zone', () => {
    let saved: Zone | undefined;
    afterEach(() => {
      if (saved) Settings.defaultZone = saved;
    });
    it('gives the same result whatever luxon’s default zone is', () => {
      saved = Settings.defaultZone;
      // 02:30 on 8 Mar does not exist in New York: read there, it would move.
      Settings.defaultZone = NY;
      expect(parseRequestedSchedule('2026-03-08T02:30')).toStrictEqual({
        ok: true,
        value: { kind: 'local', local: '2026-03-08T02:30:00.000' },
      });
      expect(parseRequestedSchedule('2026-11-26T10:00+01:00')).toStrictEqual({
        ok: true,
        value: { kind: 'instant', at: '2026-11-26T09:00:00.000Z' },
      });
      expect(at('2026-03-08T02:30:00.000', TOKYO)).toBe('2026-03-07T17:30:00.000Z');
    });
  });
});

describe('resolveScheduledAt', () => {
  it('returns an instant as sent, with no zone', () => {
    const req: RequestedSchedule = { kind: 'instant', at: '2026-05-04T10:30:00.000Z' };
    expect(resolveScheduledAt(req, TOKYO)).toStrictEqual({ at: '2026-05-04T10:30:00.000Z' });
  });

  it('reads a local time in the zone and returns the zone', () => {
    expect(resolveScheduledAt(local('2026-11-26T10:00:00.000'), TOKYO)).toStrictEqual({
      at: '2026-11-26T01:00:00.000Z',
      zone: TOKYO,
    });
  });

  describe('Asia/Tokyo (UTC+9, no DST)', () => {
    it.each([
      ['2026-11-26T10:00:00.000', '2026-11-26T01:00:00.000Z'],
      ['2026-07-01T09:00:00.000', '2026-07-01T00:00:00.000Z'],
      ['2026-01-01T08:59:59.999', '2025-12-31T23:59:59.999Z'],
      ['2026-03-08T02:30:00.000', '2026-03-07T17:30:00.000Z'],
    ])('%s -> %s', (text, expected) => {
      expect(at(text, TOKYO)).toBe(expected);
    });
  });

  describe('America/New_York', () => {
    it.each([
      ['winter (EST)', '2026-11-26T10:00:00.000', '2026-11-26T15:00:00.000Z'],
      ['summer (EDT)', '2026-07-01T10:00:00.000', '2026-07-01T14:00:00.000Z'],
    ])('%s', (_name, text, expected) => {
      expect(at(text, NY)).toBe(expected);
    });

    // Spring forward: 02:00-02:59:59.999 on 8 Mar does not exist; the first
    // instant that does is 03:00 EDT = 07:00Z.
    it.each([
      ['last instant before the gap', '2026-03-08T01:59:59.999', '2026-03-08T06:59:59.999Z'],
      ['start of the gap', '2026-03-08T02:00:00.000', '2026-03-08T07:00:00.000Z'],
      ['inside the gap', '2026-03-08T02:30:00.000', '2026-03-08T07:00:00.000Z'],
      ['end of the gap', '2026-03-08T02:59:59.999', '2026-03-08T07:00:00.000Z'],
      ['first time after the gap', '2026-03-08T03:00:00.000', '2026-03-08T07:00:00.000Z'],
      ['after the gap', '2026-03-08T03:30:00.000', '2026-03-08T07:30:00.000Z'],
    ])('spring forward, %s', (_name, text, expected) => {
      expect(at(text, NY)).toBe(expected);
    });

    // Fall back: 01:00-01:59:59.999 on 1 Nov happens twice (EDT, then EST);
    // the earlier (EDT, UTC-4) is taken.
    it.each([
      ['before the repeated hour', '2026-11-01T00:59:00.000', '2026-11-01T04:59:00.000Z'],
      ['start of the repeated hour', '2026-11-01T01:00:00.000', '2026-11-01T05:00:00.000Z'],
      ['inside the repeated hour', '2026-11-01T01:30:00.000', '2026-11-01T05:30:00.000Z'],
      ['end of the repeated hour', '2026-11-01T01:59:59.999', '2026-11-01T05:59:59.999Z'],
      ['after the repeated hour (EST)', '2026-11-01T02:00:00.000', '2026-11-01T07:00:00.000Z'],
    ])('fall back, %s', (_name, text, expected) => {
      expect(at(text, NY)).toBe(expected);
    });

    it('the moved gap time is 03:00 on the wall clock', () => {
      const wall = DateTime.fromISO(at('2026-03-08T02:30:00.000', NY), { zone: NY });
      expect(wall.toFormat("yyyy-MM-dd'T'HH:mm:ss.SSSZZ")).toBe('2026-03-08T03:00:00.000-04:00');
    });
  });

  describe('Europe/Berlin', () => {
    it.each([
      ['winter (CET)', '2026-01-15T10:00:00.000', '2026-01-15T09:00:00.000Z'],
      ['summer (CEST)', '2026-07-01T10:00:00.000', '2026-07-01T08:00:00.000Z'],
      ['spring forward, before the gap', '2026-03-29T01:59:00.000', '2026-03-29T00:59:00.000Z'],
      ['spring forward, inside the gap', '2026-03-29T02:30:00.000', '2026-03-29T01:00:00.000Z'],
      ['spring forward, after the gap', '2026-03-29T03:00:00.000', '2026-03-29T01:00:00.000Z'],
      ['fall back, repeated hour', '2026-10-25T02:30:00.000', '2026-10-25T00:30:00.000Z'],
      ['fall back, after it (CET)', '2026-10-25T03:00:00.000', '2026-10-25T02:00:00.000Z'],
    ])('%s', (_name, text, expected) => {
      expect(at(text, BERLIN)).toBe(expected);
    });
  });

  describe('unusual transitions', () => {
    it('Pacific/Apia skipped 30 Dec 2011: any time that day is the start of 31 Dec', () => {
      expect(at('2011-12-30T12:00:00.000', 'Pacific/Apia')).toBe('2011-12-30T10:00:00.000Z');
    });
    it('Australia/Lord_Howe moves 30 minutes: 02:15 in the gap is 02:30 (+11:00)', () => {
      expect(at('2026-10-04T02:15:00.000', 'Australia/Lord_Howe')).toBe('2026-10-03T15:30:00.000Z');
    });
    it('Australia/Lord_Howe repeats 01:30-02:00: the earlier (+11:00) is taken', () => {
      expect(at('2026-04-05T01:45:00.000', 'Australia/Lord_Howe')).toBe('2026-04-04T14:45:00.000Z');
    });
  });

  // Every minute of both transition days: a local time that exists once maps
  // back to itself; a repeated one to its earlier instant; a skipped one to
  // the jump.
  describe.each([
    [NY, '2026-03-08', '2026-11-01'],
    [BERLIN, '2026-03-29', '2026-10-25'],
  ])('every minute of the transition days in %s', (zone, springDay, fallDay) => {
    const minutesOf = (day: string): string[] =>
      Array.from({ length: 24 * 60 }, (_, m) =>
        DateTime.fromISO(day, { zone: 'UTC' })
          .plus({ minutes: m })
          .toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS"),
      );
    const wallOf = (iso: string): string =>
      DateTime.fromISO(iso, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");

    it('spring: existing times round-trip; the 60 skipped minutes go to the jump', () => {
      const moved = minutesOf(springDay).filter((text) => wallOf(at(text, zone)) !== text);
      expect(moved).toHaveLength(60);
      const jump = new Set(moved.map((text) => at(text, zone)));
      expect(jump.size).toBe(1);
      const [instant = ''] = [...jump];
      expect(DateTime.fromISO(instant, { zone }).minus({ milliseconds: 1 }).offset).not.toBe(
        DateTime.fromISO(instant, { zone }).offset,
      );
    });

    it('fall: every time round-trips and a repeated one is the earlier instant', () => {
      for (const text of minutesOf(fallDay)) {
        const instant = at(text, zone);
        expect(wallOf(instant)).toBe(text);
        const hourEarlier = DateTime.fromISO(instant).minus({ hours: 1 }).toUTC().toISO() ?? '';
        expect(wallOf(hourEarlier)).not.toBe(text);
      }
    });
  });

  // Why the code does not take luxon's reading as it is: luxon moves a gap
  // time by the gap's length and takes the later of a repeated time.
  it('differs from luxon alone on both DST edges', () => {
    const luxon = (text: string) => DateTime.fromISO(text, { zone: NY }).toUTC().toISO();
    expect(luxon('2026-03-08T02:30')).toBe('2026-03-08T07:30:00.000Z');
    expect(at('2026-03-08T02:30:00.000', NY)).toBe('2026-03-08T07:00:00.000Z');
    expect(luxon('2026-11-01T01:30')).toBe('2026-11-01T06:30:00.000Z');
    expect(at('2026-11-01T01:30:00.000', NY)).toBe('2026-11-01T05:30:00.000Z');
  });

  it('throws a RangeError for an unknown zone', () => {
    expect(() => resolveScheduledAt(local('2026-11-26T10:00:00.000'), 'Mars/Olympus')).toThrow(
      RangeError,
    );
  });

  it('throws a RangeError for a malformed local value', () => {
    expect(() => resolveScheduledAt(local('2026-02-30T10:00:00.000'), TOKYO)).toThrow(RangeError);
  });
});
