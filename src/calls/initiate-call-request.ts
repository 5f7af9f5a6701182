// Validation of the call-initiation body (spec §2.1, §4.1 rules 1-2, §8),
// field by field, with one precise error per failure. Pure: no store access.
import { SUPER_VARIABLE_TYPES, type SuperVariable } from '../model/call-record.js';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { GatewayError } from '../errors.js';
import {
  parseRequestedSchedule,
  type RequestedSchedule,
  type ScheduleProblem,
} from './intake/scheduled-at.js';

export type { RequestedSchedule } from './intake/scheduled-at.js';

export { SUPER_VARIABLE_TYPES };
export type SuperVariableType = (typeof SUPER_VARIABLE_TYPES)[number];

export type { SuperVariable };

export interface InitiateCallRequest {
  sipTrunkId?: string;
  voipPhoneId?: string;
  callerId?: string;
  outBoundCallerIdPrefix?: string;
  destinationNumber: string;
  isInternalCall: boolean;
  agentId?: string;
  contextForAi?: string;
  emailAddress?: string;
  dynamicVariables: Record<string, string>;
  superVariables: Record<string, SuperVariable>;
  metadata: Record<string, string>;
  overrideTimeRestriction: boolean;
  overrideDayRestriction: boolean;
  /** Undefined when not sent: the company default decides. */
  useAntiHarassmentProtection?: boolean;
  isWelcomeMessageAIGenerated: boolean;
  welcomeMessageOverride?: string;
  /**
   * An instant (sent with `Z` or an offset) or a local time still to be read
   * in the destination's zone (sent without one): see `resolveScheduledAt`.
   */
  scheduledAt?: RequestedSchedule;
  retryDelayMinutes: number;
  maxRetries: number;
  additionalPhoneNumbers: string[];
}

export const CONTEXT_FOR_AI_MAX = 12_000;
export const RETRY_DELAY_MINUTES = { min: 30, max: 1440, default: 30 } as const;
/** DESIGN: 0 to 3 accepted; 0 and 1 both mean a single attempt. */
export const MAX_RETRIES = { min: 0, max: 3, default: 3 } as const;

/** Every field of the contract (spec §2.1); anything else is refused. */
export const INITIATE_CALL_FIELDS = [
  'sipTrunkId',
  'voipPhoneId',
  'callerId',
  'outBoundCallerIdPrefix',
  'destinationNumber',
  'isInternalCall',
  'agentId',
  'contextForAi',
  'emailAddress',
  'dynamicVariables',
  'superVariables',
  'metadata',
  'overrideTimeRestriction',
  'overrideDayRestriction',
  'useAntiHarassmentProtection',
  'isWelcomeMessageAIGenerated',
  'welcomeMessageOverride',
  'scheduledAt',
  'retryDelayMinutes',
  'maxRetries',
  'additionalPhoneNumbers',
] as const;
const KNOWN_FIELDS: ReadonlySet<string> = new Set(INITIATE_CALL_FIELDS);

/** A 400 naming the field; `code` is `invalid_<field>` unless given. */
export class RequestValidationError extends GatewayError {
  constructor(
    readonly field: string | null,
    reason: string,
    code: string = `invalid_${(field ?? 'body').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
  ) {
    super(code, reason, 400);
  }
}

/** The E.164 form of a number, or undefined when it is not a valid one. */
export function toE164(text: string): string | undefined {
  if (!/^\+[1-9]\d{6,14}$/.test(text)) return undefined;
  const parsed = parsePhoneNumberFromString(text);
  return parsed && parsed.isValid() && parsed.number === text ? parsed.number : undefined;
}

export function validateInitiateCallRequest(body: unknown): InitiateCallRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RequestValidationError(
      null,
      'The request body must be a JSON object.',
      'invalid_body',
    );
  }
  const b = body as Record<string, unknown>;
  if ('fromNumber' in b) {
    throw new RequestValidationError(
      'fromNumber',
      'fromNumber is not part of the contract and must not be sent; use callerId.',
      'from_number_not_allowed',
    );
  }
  for (const key of Object.keys(b)) {
    if (!KNOWN_FIELDS.has(key))
      throw new RequestValidationError(key, `Unknown field "${key}".`, 'unknown_field');
  }

  const destination = requiredString(b, 'destinationNumber');
  const destinationNumber = toE164(destination);
  if (!destinationNumber) {
    throw new RequestValidationError(
      'destinationNumber',
      'destinationNumber must be a valid phone number in E.164 format, e.g. +14155550123.',
    );
  }
  const isInternalCall = optionalBoolean(b, 'isInternalCall') ?? false;
  const agentId = optionalString(b, 'agentId');
  if (!agentId && !isInternalCall) {
    throw new RequestValidationError('agentId', 'agentId is required for outbound AI calls.');
  }
  const contextForAi = optionalString(b, 'contextForAi', true);
  if (contextForAi !== undefined && contextForAi.length > CONTEXT_FOR_AI_MAX) {
    throw new RequestValidationError(
      'contextForAi',
      `contextForAi is ${contextForAi.length} characters; the maximum is ${CONTEXT_FOR_AI_MAX}.`,
    );
  }
  const emailAddress = optionalString(b, 'emailAddress');
  if (emailAddress !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(emailAddress)) {
    throw new RequestValidationError('emailAddress', 'emailAddress must be an e-mail address.');
  }
  const callerId = optionalString(b, 'callerId');
  if (callerId !== undefined && !toE164(callerId) && !/^sips?:[^\s@]+@[^\s]+$/i.test(callerId)) {
    throw new RequestValidationError('callerId', 'callerId must be an E.164 number or a SIP URI.');
  }
  const prefix = optionalString(b, 'outBoundCallerIdPrefix');
  if (prefix !== undefined && !/^\+?\d{1,15}$/.test(prefix)) {
    throw new RequestValidationError(
      'outBoundCallerIdPrefix',
      'outBoundCallerIdPrefix must be digits, optionally after a leading +.',
    );
  }

  const metadata = stringMap(b, 'metadata');
  for (const key of Object.keys(metadata)) if (key.startsWith('scenario_')) delete metadata[key];

  return {
    sipTrunkId: optionalString(b, 'sipTrunkId'),
    voipPhoneId: optionalString(b, 'voipPhoneId'),
    callerId,
    outBoundCallerIdPrefix: prefix,
    destinationNumber,
    isInternalCall,
    agentId,
    contextForAi,
    emailAddress,
    dynamicVariables: stringMap(b, 'dynamicVariables'),
    superVariables: superVariables(b),
    metadata,
    overrideTimeRestriction: optionalBoolean(b, 'overrideTimeRestriction') ?? false,
    overrideDayRestriction: optionalBoolean(b, 'overrideDayRestriction') ?? false,
    useAntiHarassmentProtection: optionalBoolean(b, 'useAntiHarassmentProtection'),
    isWelcomeMessageAIGenerated: optionalBoolean(b, 'isWelcomeMessageAIGenerated') ?? false,
    welcomeMessageOverride: optionalString(b, 'welcomeMessageOverride', true),
    scheduledAt: scheduledAt(b),
    retryDelayMinutes: boundedInteger(b, 'retryDelayMinutes', RETRY_DELAY_MINUTES),
    maxRetries: boundedInteger(b, 'maxRetries', MAX_RETRIES),
    additionalPhoneNumbers: additionalPhoneNumbers(b, destinationNumber),
  };
}

function requiredString(b: Record<string, unknown>, field: string): string {
  const v = b[field];
  if (v === undefined || v === null || v === '')
    throw new RequestValidationError(field, `${field} is required.`);
  if (typeof v !== 'string') throw new RequestValidationError(field, `${field} must be a string.`);
  return v.trim();
}

function optionalString(
  b: Record<string, unknown>,
  field: string,
  keepEmpty = false,
): string | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RequestValidationError(field, `${field} must be a string.`);
  return v === '' && !keepEmpty ? undefined : v;
}

function optionalBoolean(b: Record<string, unknown>, field: string): boolean | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean')
    throw new RequestValidationError(field, `${field} must be true or false.`);
  return v;
}

function boundedInteger(
  b: Record<string, unknown>,
  field: string,
  range: { min: number; max: number; default: number },
): number {
  const v = b[field];
  if (v === undefined || v === null) return range.default;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < range.min || v > range.max) {
    throw new RequestValidationError(
      field,
      `${field} must be a whole number from ${range.min} to ${range.max}.`,
    );
  }
  return v;
}

function stringMap(b: Record<string, unknown>, field: string): Record<string, string> {
  const v = b[field];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new RequestValidationError(
      field,
      `${field} must be an object mapping strings to strings.`,
    );
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(v)) {
    if (typeof value !== 'string')
      throw new RequestValidationError(field, `${field}.${key} must be a string.`);
    out[key] = value;
  }
  return out;
}

function superVariables(b: Record<string, unknown>): Record<string, SuperVariable> {
  const field = 'superVariables';
  const v = b[field];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v))
    throw new RequestValidationError(field, 'superVariables must be an object of objects.');
  const out: Record<string, SuperVariable> = {};
  for (const [key, item] of Object.entries(v)) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new RequestValidationError(
        field,
        `superVariables.${key} must be an object with placeholder, value and type.`,
      );
    }
    const entry = item as Record<string, unknown>;
    for (const name of Object.keys(entry)) {
      if (!['placeholder', 'value', 'type'].includes(name)) {
        throw new RequestValidationError(
          field,
          `superVariables.${key} has an unknown field "${name}".`,
        );
      }
    }
    if (typeof entry.placeholder !== 'string' || entry.placeholder === '') {
      throw new RequestValidationError(
        field,
        `superVariables.${key}.placeholder is required and must be a string.`,
      );
    }
    if (typeof entry.value !== 'string') {
      throw new RequestValidationError(
        field,
        `superVariables.${key}.value is required and must be a string.`,
      );
    }
    if (
      entry.type !== undefined &&
      !SUPER_VARIABLE_TYPES.includes(entry.type as SuperVariableType)
    ) {
      throw new RequestValidationError(
        field,
        `superVariables.${key}.type must be one of ${SUPER_VARIABLE_TYPES.join(', ')}.`,
      );
    }
    out[key] = {
      placeholder: entry.placeholder,
      value: entry.value,
      ...(entry.type ? { type: entry.type as SuperVariableType } : {}),
    };
  }
  return out;
}

/** DESIGN: a `scheduledAt` without an offset is local time at the destination. */
function scheduledAt(b: Record<string, unknown>): RequestedSchedule | undefined {
  const v = optionalString(b, 'scheduledAt');
  if (v === undefined) return undefined;
  const parsed = parseRequestedSchedule(v);
  if (parsed.ok) return parsed.value;
  throw new RequestValidationError('scheduledAt', SCHEDULE_PROBLEMS[parsed.problem](quote(v)));
}

const SCHEDULE_PROBLEMS: Record<ScheduleProblem, (value: string) => string> = {
  format: (value) =>
    `scheduledAt ${value} is not an ISO 8601 date-time; send 2026-05-04T10:30:00Z (an instant) or 2026-05-04T10:30 (local time at the destination).`,
  date: (value) => `scheduledAt ${value} is not a real date and time.`,
  offset: (value) =>
    `scheduledAt ${value} has an offset out of range; offsets go from -23:59 to +23:59.`,
};

// additionalPhoneNumbers (spec §2.1), as DESIGN "Ambiguities in the spec,
// settled" reads it: commas, semicolons and newlines always separate;
// inside one item, spaces, dots, dashes and parentheses are formatting when
// the whole item is a valid E.164 number, separators otherwise. An item that
// is not a valid number after this rule is a 400 naming it; nothing is
// dropped silently. Further decisions:
// - A number must be written in E.164, with its + and country code: a
//   string without + is refused. "(415) 555-0123" is a national number;
//   reading its digits after a + would guess a country (+41…) and could
//   land on someone else's valid number. A JSON number has no room for a +,
//   so it is read as the digits after one: 12125550100 is +12125550100.
// - "Spaces" are any white space; "dashes" are any Unicode dash (copied
//   text often carries an en dash). When spaces separate, each sub-item
//   follows the same rule on its own: its dots, dashes and parentheses are
//   formatting when it is a valid number without them.
// - An empty piece between separators in a string ("+14155550123," or a
//   blank line) is no input and is skipped; a string with text but no piece
//   (",") and an empty or blank array element ("", " ") are refused. A
//   blank top-level string means no alternates, like an omitted field.
// - The destination number and repeats of an earlier alternate are dropped:
//   de-duplication, not lost input, as every distinct number is dialed once.
//   There is no cap on the count beyond the body size limit.

const FIELD = 'additionalPhoneNumbers';
/** Always separate items. */
const ITEM_SEPARATORS = /\r\n|[\n\r,;]/;
/** Formatting inside a valid number, besides white space. */
const FORMATTING = /[.()\p{Pd}]/gu;
const WHITE_SPACE = /\s+/u;
const WHITE_SPACE_ALL = /\s/gu;
const E164_HINT = 'a + and the country code, e.g. +14155550123';

function additionalPhoneNumbers(b: Record<string, unknown>, destination: string): string[] {
  const v = b[FIELD];
  if (v === undefined || v === null) return [];
  const found = typeof v === 'string' && v.trim() === '' ? [] : alternatesOf(v);
  return [...new Set(found)].filter((n) => n !== destination);
}

function alternatesOf(v: unknown): string[] {
  if (Array.isArray(v)) return v.flatMap((element, i) => elementNumbers(element, `${FIELD}[${i}]`));
  if (typeof v === 'string' || typeof v === 'number') return elementNumbers(v, FIELD);
  throw new RequestValidationError(
    FIELD,
    `${FIELD} must be a string, a number, or an array of strings and numbers.`,
  );
}

/** The numbers of one element; `where` names it in errors. */
function elementNumbers(element: unknown, where: string): string[] {
  if (typeof element === 'number') return [numberValue(element, where)];
  if (typeof element !== 'string') {
    throw new RequestValidationError(
      FIELD,
      `${where} must be a string or a number, not ${element === null ? 'null' : typeof element}.`,
    );
  }
  if (element.trim() === '') {
    throw new RequestValidationError(
      FIELD,
      `${where} is empty; send a phone number or leave it out.`,
    );
  }
  const pieces = element
    .split(ITEM_SEPARATORS)
    .map((piece) => piece.trim())
    .filter((piece) => piece !== '');
  if (pieces.length === 0)
    throw new RequestValidationError(FIELD, `${where} ${quote(element)} holds no phone number.`);
  return pieces.flatMap((piece) => itemNumbers(piece, where));
}

/** A JSON number is the digits after the +. */
function numberValue(n: number, where: string): string {
  const e164 = Number.isSafeInteger(n) && n > 0 ? toE164(`+${n}`) : undefined;
  if (e164) return e164;
  throw new RequestValidationError(
    FIELD,
    `${where}: ${String(n)} is not a valid phone number; a JSON number is read as the digits after a +, country code first, e.g. 14155550123.`,
  );
}

/** One item: a single number when it is one as a whole, else space-separated numbers. */
function itemNumbers(item: string, where: string): string[] {
  const whole = withoutFormatting(item);
  if (whole) return [whole];
  const subItems = item.split(WHITE_SPACE);
  if (subItems.length === 1) throw notANumber(where, item);
  return subItems.map((sub) => {
    const e164 = withoutFormatting(sub);
    if (!e164) throw notANumber(where, sub, item);
    return e164;
  });
}

function withoutFormatting(text: string): string | undefined {
  return toE164(text.replace(WHITE_SPACE_ALL, '').replace(FORMATTING, ''));
}

function notANumber(where: string, text: string, within?: string): RequestValidationError {
  const context = within === undefined ? '' : ` (in ${quote(within)})`;
  return new RequestValidationError(
    FIELD,
    `${where}: ${quote(text)}${context} is not a valid phone number in E.164 format (${E164_HINT}); separate several numbers with commas.`,
  );
}

/** Characters never echoed: controls, format marks (bidi overrides), lone surrogates, line separators. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const QUOTE_MAX = 40;

/** The requester's text, quoted for an error reason: unsafe characters removed, at most 40 characters. */
function quote(text: string): string {
  const chars = Array.from(text.replace(UNSAFE, ''));
  const shown =
    chars.length > QUOTE_MAX ? `${chars.slice(0, QUOTE_MAX - 1).join('')}…` : chars.join('');
  return `"${shown}"`;
}
