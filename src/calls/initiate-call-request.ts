// The call-initiation rules a schema cannot say (spec §2.1, §4.1 rules 1-2,
// §8), one precise 400 each, on a body the schema (intake/initiate-call-body.ts)
// has accepted. Pure: no store access.
import { SUPER_VARIABLE_TYPES, type SuperVariable } from '../model/call-record.js';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { GatewayError, quoteForReason as quote } from '../errors.js';
import { CALL_HEADERS_MAX_BYTES } from '../model/sip-values.js';
import {
  CONTEXT_FOR_AI_MAX,
  INITIATE_CALL_FIELDS,
  MAX_RETRIES,
  RETRY_DELAY_MINUTES,
  type InitiateCallBody,
} from './intake/initiate-call-body.js';
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
  /** Headers for each INVITE of the call (X- and User-to-User). */
  sipHeaders: Record<string, string>;
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

export { CONTEXT_FOR_AI_MAX, INITIATE_CALL_FIELDS, MAX_RETRIES, RETRY_DELAY_MINUTES };
export type { InitiateCallBody };

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

/**
 * The request as the domain reads it, from a body the schema has already
 * accepted (initiate-call-body.ts): the spec rules a schema cannot say, one
 * precise 400 each, and the defaults for fields left out.
 */
export function readInitiateCallRequest(b: InitiateCallBody): InitiateCallRequest {
  const destinationNumber = toE164(b.destinationNumber.trim());
  if (!destinationNumber) {
    throw new RequestValidationError(
      'destinationNumber',
      'destinationNumber must be a valid phone number in E.164 format, e.g. +14155550123.',
    );
  }
  const isInternalCall = b.isInternalCall ?? false;
  const agentId = nonEmpty(b.agentId);
  if (!agentId && !isInternalCall) {
    throw new RequestValidationError('agentId', 'agentId is required for outbound AI calls.');
  }
  const emailAddress = nonEmpty(b.emailAddress);
  const callerId = nonEmpty(b.callerId);
  if (callerId !== undefined && !toE164(callerId) && !/^sips?:[^\s@]+@[^\s]+$/i.test(callerId)) {
    throw new RequestValidationError('callerId', 'callerId must be an E.164 number or a SIP URI.');
  }

  const metadata = { ...b.metadata };
  for (const key of Object.keys(metadata)) if (key.startsWith('scenario_')) delete metadata[key];

  return {
    sipTrunkId: nonEmpty(b.sipTrunkId),
    voipPhoneId: nonEmpty(b.voipPhoneId),
    callerId,
    outBoundCallerIdPrefix: nonEmpty(b.outBoundCallerIdPrefix),
    destinationNumber,
    isInternalCall,
    agentId,
    contextForAi: b.contextForAi,
    emailAddress,
    dynamicVariables: { ...b.dynamicVariables },
    superVariables: { ...b.superVariables },
    metadata,
    sipHeaders: callHeaders(b.sipHeaders),
    overrideTimeRestriction: b.overrideTimeRestriction ?? false,
    overrideDayRestriction: b.overrideDayRestriction ?? false,
    useAntiHarassmentProtection: b.useAntiHarassmentProtection,
    isWelcomeMessageAIGenerated: b.isWelcomeMessageAIGenerated ?? false,
    welcomeMessageOverride: b.welcomeMessageOverride,
    scheduledAt: scheduledAt(nonEmpty(b.scheduledAt)),
    retryDelayMinutes: b.retryDelayMinutes ?? RETRY_DELAY_MINUTES.default,
    maxRetries: b.maxRetries ?? MAX_RETRIES.default,
    additionalPhoneNumbers: additionalPhoneNumbers(b.additionalPhoneNumbers, destinationNumber),
  };
}

/** An empty string is a field left out (clients send "" for "none"). */
function nonEmpty(v: string | undefined): string | undefined {
  return v === '' ? undefined : v;
}

/** DESIGN: a `scheduledAt` without an offset is local time at the destination. */
function scheduledAt(v: string | undefined): RequestedSchedule | undefined {
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

function additionalPhoneNumbers(
  v: InitiateCallBody['additionalPhoneNumbers'],
  destination: string,
): string[] {
  if (v === undefined) return [];
  const found = typeof v === 'string' && v.trim() === '' ? [] : alternatesOf(v);
  return [...new Set(found)].filter((n) => n !== destination);
}

function alternatesOf(v: string | number | Array<string | number>): string[] {
  if (Array.isArray(v)) return v.flatMap((element, i) => elementNumbers(element, `${FIELD}[${i}]`));
  return elementNumbers(v, FIELD);
}

/** The numbers of one element; `where` names it in errors. */
function elementNumbers(element: string | number, where: string): string[] {
  if (typeof element === 'number') return [numberValue(element, where)];
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

/** The call's own INVITE headers, within their size limit (the schema checked each name and value). */
function callHeaders(h: Record<string, string> | undefined): Record<string, string> {
  const headers = { ...h };
  const bytes = Object.entries(headers).reduce(
    (n, [name, value]) => n + Buffer.byteLength(name) + Buffer.byteLength(value) + 4,
    0,
  );
  if (bytes > CALL_HEADERS_MAX_BYTES) {
    throw new RequestValidationError(
      'sipHeaders',
      `sipHeaders add ${bytes} bytes to the INVITE; at most ${CALL_HEADERS_MAX_BYTES}.`,
    );
  }
  return headers;
}
