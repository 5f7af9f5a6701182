// The call-initiation body's additionalPhoneNumbers and scheduledAt (spec
// §2.1), as DESIGN "Ambiguities in the spec, settled" reads them, on bodies
// the schema accepts (the wrong JSON types are refused before, by the route's
// schema: src/api/routes/initiate-call.test.ts).
import { describe, expect, it } from 'vitest';
import {
  RequestValidationError,
  readInitiateCallRequest,
  type InitiateCallBody,
  type InitiateCallRequest,
} from './initiate-call-request.js';

const DESTINATION = '+16502530000';
const SF = '+14155550123';
const NYC = '+12125550100';
const BERLIN = '+493012345678';
const LONDON = '+442071838750';

function validate(extra: Partial<InitiateCallBody>): InitiateCallRequest {
  return readInitiateCallRequest({ destinationNumber: DESTINATION, agentId: 'a1', ...extra });
}

function refusal(extra: Partial<InitiateCallBody>): RequestValidationError {
  try {
    validate(extra);
  } catch (e) {
    if (e instanceof RequestValidationError) return e;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(extra)}`);
}

type Alternates = InitiateCallBody['additionalPhoneNumbers'];

const alternates = (value: Alternates): string[] =>
  validate({ additionalPhoneNumbers: value }).additionalPhoneNumbers;

/** The 400 for an additionalPhoneNumbers value, checked for code, status and field. */
function refusedAlternates(value: Alternates): string {
  const e = refusal({ additionalPhoneNumbers: value });
  expect(e.code).toBe('invalid_additional_phone_numbers');
  expect(e.httpStatus).toBe(400);
  expect(e.field).toBe('additionalPhoneNumbers');
  return e.message;
}

describe('additionalPhoneNumbers', () => {
  describe('accepted', () => {
    const rows: Array<[string, Alternates, string[]]> = [
      ['omitted', undefined, []],
      ['an empty array', [], []],
      ['an empty string (like omitted)', '', []],
      ['a blank string (like omitted)', '  \t ', []],
      ['one E.164 number', SF, [SF]],
      ['spaces as formatting', '+49 30 1234 5678', [BERLIN]],
      ['spaces, parentheses and dashes', '+1 (415) 555-0123', [SF]],
      ['dots', '+1.415.555.0123', [SF]],
      ['dashes only', '+1-415-555-0123', [SF]],
      ['an en dash and a non-breaking space', '+1\u00a0415–555–0123', [SF]],
      ['a tab', '+49\t30\t12345678', [BERLIN]],
      ['surrounding white space', '   +14155550123  ', [SF]],
      ['commas', '+14155550123, +12125550100', [SF, NYC]],
      ['commas without spaces', '+14155550123,+12125550100', [SF, NYC]],
      ['semicolons', '+14155550123; +12125550100', [SF, NYC]],
      ['newlines and CRLF', '+14155550123\n+12125550100\r\n+493012345678', [SF, NYC, BERLIN]],
      ['a lone CR', '+1 415 555 0123\r+1 212 555 0100', [SF, NYC]],
      ['spaces between whole numbers', '+14155550123 +12125550100', [SF, NYC]],
      ['formatted sub-items', '+1-415-555-0123 +1.212.555.0100', [SF, NYC]],
      [
        'formatted items between commas',
        '+1 (415) 555-0123, +49 30 1234 5678; +44 20 7183 8750',
        [SF, BERLIN, LONDON],
      ],
      ['a trailing comma', '+14155550123,', [SF]],
      ['empty pieces between separators', '+14155550123,, ;\n\n+12125550100\n', [SF, NYC]],
      ['a JSON number: the digits after +', 12125550100, [NYC]],
      ['an array of strings and numbers', [SF, 12125550100], [SF, NYC]],
      [
        'an array element holding a list',
        ['+14155550123, +12125550100', BERLIN],
        [SF, NYC, BERLIN],
      ],
      ['order kept', [LONDON, SF, NYC], [LONDON, SF, NYC]],
    ];
    it.each(rows)('%s', (_name, value, expected) => {
      expect(alternates(value)).toStrictEqual(expected);
    });
  });

  describe('de-duplication (not lost input: every distinct number is dialed once)', () => {
    it('drops the destination number', () => {
      expect(alternates(`${DESTINATION}, ${SF}`)).toStrictEqual([SF]);
      expect(alternates(['+1 650 253 0000', 16502530000])).toStrictEqual([]);
    });
    it('keeps the first of numbers written differently', () => {
      expect(
        alternates([NYC, '+1 (415) 555-0123', 14155550123, SF, '+1.212.555.0100']),
      ).toStrictEqual([NYC, SF]);
    });
  });

  describe('refused with a reason naming the item', () => {
    const rows: Array<[string, Alternates, string[]]> = [
      ['a national number without +', '(415) 555-0123', ['"(415)"', '(in "(415) 555-0123")']],
      ['digits without +', '14155550123', ['"14155550123"', 'E.164']],
      ['letters', 'abc', ['"abc"']],
      ['n/a', 'n/a', ['"n/a"']],
      ['a bad item beside a good one', '+14155550123, abc', ['"abc"']],
      ['a bad item in an array', [SF, 'call me'], ['additionalPhoneNumbers[1]', '"call"']],
      ['a number too short', '+1415555012', ['"+1415555012"']],
      ['an extension', '+14155550123 ext 5', ['"ext"', '(in "+14155550123 ext 5")']],
      ['a slash', '+14155550123/4', ['"+14155550123/4"']],
      ['a slash in a spaced item', '+1 415 555 0123/4', ['"+1"', '(in "+1 415 555 0123/4")']],
      ['two numbers separated by spaces only', '+1 212 555 0100 +1 415 555 0123', ['"+1"']],
      ['only separators', ',', ['holds no phone number', '","']],
      ['only separators and blanks', ' ;\n, ', ['holds no phone number']],
      ['an empty array element', ['', ' '], ['additionalPhoneNumbers[0] is empty']],
      ['a blank array element after a good one', [SF, ' '], ['additionalPhoneNumbers[1] is empty']],
      ['a JSON number without its country code', 4155550123, ['4155550123']],
      ['a JSON number that is zero', 0, ['0 is not a valid']],
      ['a negative JSON number', -12125550100, ['-12125550100']],
      ['a fractional JSON number', 12125550100.5, ['12125550100.5']],
      ['an unsafe JSON integer', 2 ** 60, ['1152921504606847000']],
    ];
    it.each(rows)('%s', (_name, value, fragments) => {
      const reason = refusedAlternates(value);
      for (const fragment of fragments) expect(reason).toContain(fragment);
    });
  });

  describe('what the reason echoes', () => {
    it('is exact for an item that is one word', () => {
      expect(refusedAlternates('n/a')).toBe(
        'additionalPhoneNumbers: "n/a" is not a valid phone number in E.164 format (a + and the country code, e.g. +14155550123); separate several numbers with commas.',
      );
    });
    it('is exact for an item split at its spaces', () => {
      expect(refusedAlternates([SF, '+1 212 555 0100 +1 415 555 0123'])).toBe(
        'additionalPhoneNumbers[1]: "+1" (in "+1 212 555 0100 +1 415 555 0123") is not a valid phone number in E.164 format (a + and the country code, e.g. +14155550123); separate several numbers with commas.',
      );
    });
    it('is exact for a JSON number', () => {
      expect(refusedAlternates(4155550123)).toBe(
        'additionalPhoneNumbers: 4155550123 is not a valid phone number; a JSON number is read as the digits after a +, country code first, e.g. 14155550123.',
      );
    });
    it('removes control and bidi characters', () => {
      const reason = refusedAlternates('+1415\u0000555\u001b[31m0123\u202e');
      expect(reason).toContain('"+1415555[31m0123"');
      expect(reason).not.toMatch(/[\p{Cc}\u202e]/u);
    });
    it('shortens a long item to 40 characters', () => {
      const reason = refusedAlternates('x'.repeat(100));
      expect(reason).toContain(`"${'x'.repeat(39)}…"`);
      expect(reason).not.toContain('x'.repeat(40));
    });
    it('never cuts a character in half', () => {
      const reason = refusedAlternates('😀'.repeat(50));
      expect(reason).toContain(`"${'😀'.repeat(39)}…"`);
      expect(reason).not.toMatch(/\p{Cs}/u);
    });
    it('removes a lone surrogate', () => {
      expect(refusedAlternates('\ud800abc')).toContain('"abc"');
    });
  });
});

describe('scheduledAt', () => {
  it('is undefined when omitted or empty', () => {
    expect(validate({}).scheduledAt).toBeUndefined();
    expect(validate({ scheduledAt: '' }).scheduledAt).toBeUndefined();
  });

  it('with Z is an instant in UTC', () => {
    expect(validate({ scheduledAt: '2026-05-04T10:30:00Z' }).scheduledAt).toStrictEqual({
      kind: 'instant',
      at: '2026-05-04T10:30:00.000Z',
    });
  });

  it('with an offset is an instant in UTC', () => {
    expect(validate({ scheduledAt: '2026-06-11T10:00:00-04:00' }).scheduledAt).toStrictEqual({
      kind: 'instant',
      at: '2026-06-11T14:00:00.000Z',
    });
  });

  it('without an offset is local time at the destination, not in the server zone', () => {
    expect(validate({ scheduledAt: '2026-11-26T10:00:00' }).scheduledAt).toStrictEqual({
      kind: 'local',
      local: '2026-11-26T10:00:00.000',
    });
    expect(validate({ scheduledAt: '2026-11-26T10:00' }).scheduledAt).toStrictEqual({
      kind: 'local',
      local: '2026-11-26T10:00:00.000',
    });
  });

  const invalid: Array<[string, string, string]> = [
    ['a day that does not exist', '2026-02-30T10:00', 'is not a real date and time'],
    ['a time that does not exist', '2026-05-04T10:61', 'is not a real date and time'],
    ['a date without a time', '2026-05-04', 'is not an ISO 8601 date-time'],
    ['free text', 'next monday', 'is not an ISO 8601 date-time'],
    ['an offset out of range', '2026-05-04T10:30+25:00', 'offset out of range'],
  ];
  it.each(invalid)('refuses %s with invalid_scheduled_at', (_name, value, fragment) => {
    const e = refusal({ scheduledAt: value });
    expect(e.code).toBe('invalid_scheduled_at');
    expect(e.httpStatus).toBe(400);
    expect(e.message).toContain(fragment);
  });

  it('names the value it refuses, shortened and without control characters', () => {
    const e = refusal({ scheduledAt: `2026-02-30T10:00\u0007${'9'.repeat(60)}` });
    expect(e.message).toContain(`"2026-02-30T10:00${'9'.repeat(23)}…"`);
    expect(e.message).not.toContain('\u0007');
  });

  describe('sipHeaders', () => {
    it('are kept as given, and empty when absent', () => {
      expect(validate({}).sipHeaders).toEqual({});
      expect(validate({ sipHeaders: { 'X-Crm-Lead': 'L-1' } }).sipHeaders).toEqual({
        'X-Crm-Lead': 'L-1',
      });
    });

    it('over 2048 bytes in all: invalid_sip_headers', () => {
      const big = Object.fromEntries(
        Array.from({ length: 5 }, (_, i) => [`X-Big-${i}`, 'v'.repeat(500)]),
      );
      const err = refusal({ sipHeaders: big });
      expect(err.code).toBe('invalid_sip_headers');
      expect(err.message).toContain('2048');
    });
  });
});
