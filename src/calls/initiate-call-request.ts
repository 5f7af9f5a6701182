// Validation of the call-initiation body (spec §2.1, §4.1 rules 1-2, §8),
// field by field, with one precise error per failure. Pure: no store access.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { DateTime } from 'luxon';
import { GatewayError } from '../errors.js';

export const SUPER_VARIABLE_TYPES = ['text', 'number', 'boolean', 'date', 'time'] as const;
export type SuperVariableType = (typeof SUPER_VARIABLE_TYPES)[number];

export interface SuperVariable {
  placeholder: string;
  value: string;
  type?: SuperVariableType;
}

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
  /** ISO 8601 instant in UTC. */
  scheduledAt?: string;
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

function scheduledAt(b: Record<string, unknown>): string | undefined {
  const v = optionalString(b, 'scheduledAt');
  if (v === undefined) return undefined;
  const parsed = DateTime.fromISO(v, { setZone: true });
  if (!parsed.isValid || !/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    throw new RequestValidationError(
      'scheduledAt',
      'scheduledAt must be an ISO 8601 date-time, e.g. 2026-05-04T10:30:00Z.',
    );
  }
  return parsed.toUTC().toISO()!;
}

/**
 * Values may be comma- or space-separated; non-digit characters are stripped
 * (spec §2.1). Within a comma-separated part, space-separated tokens are
 * joined until they form a valid number, so "+1 (212) 555-0101 +1 212 555 0102"
 * reads as two numbers.
 */
function additionalPhoneNumbers(b: Record<string, unknown>, destination: string): string[] {
  const field = 'additionalPhoneNumbers';
  const v = b[field];
  if (v === undefined || v === null) return [];
  const items = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  const add = (e164: string) => {
    if (e164 !== destination && !out.includes(e164)) out.push(e164);
  };
  for (const item of items) {
    if (
      typeof item !== 'string' &&
      (typeof item !== 'number' || !Number.isSafeInteger(item) || item <= 0)
    ) {
      throw new RequestValidationError(
        field,
        'additionalPhoneNumbers must be a string, a positive whole number, or an array of those.',
      );
    }
    for (const part of String(item).split(',')) {
      let digits = '';
      let text = '';
      for (const token of part.split(/\s+/)) {
        digits += token.replace(/\D/g, '');
        text += `${token} `;
        const e164 = digits ? toE164(`+${digits}`) : undefined;
        if (e164) {
          add(e164);
          digits = '';
          text = '';
        }
      }
      if (digits !== '') {
        throw new RequestValidationError(
          field,
          `additionalPhoneNumbers contains "${text.trim()}", which is not a valid international number.`,
        );
      }
    }
  }
  return out;
}
