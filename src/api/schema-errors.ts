// Turns the route schema's first failure into a catalogue error: a sentence
// that names the field and says what it must be, never the schema's regex.
// Most routes answer `invalid_body` (or `unknown_field`); initiate-call
// answers one code per field, `invalid_<field>` (spec §7), and
// `from_number_not_allowed` for the field the contract forbids.
import type { FastifySchemaValidationError } from 'fastify';
import type { SchemaErrorDataVar } from 'fastify/types/schema.js';
import {
  CALLER_ID_PREFIX_PATTERN,
  E164_PATTERN,
  ROUTE_PREFIX_PATTERN,
  SIP_HEADER_NAME_PATTERN,
  SIP_HOST_PATTERN,
  SIP_TEXT_PATTERN,
  TECH_PREFIX_PATTERN,
} from '../model/sip-values.js';
import { quoteForReason, shortenForReason } from '../errors.js';
import { ApiError, fieldErrorCode } from './error-catalogue.js';

export interface SchemaErrorStyle {
  /** initiate-call: `invalid_<top-level field>` instead of `invalid_body`. */
  fieldCodes: boolean;
}

type SchemaError = FastifySchemaValidationError & { keyword: string; instancePath: string };

/** What a pattern means, in words (patterns of our own schemas). */
const PATTERN_WORDS: Record<string, string> = {
  [E164_PATTERN]: 'an E.164 number, e.g. +14155550123',
  [SIP_HOST_PATTERN]: 'a host name or an IP address',
  [SIP_HEADER_NAME_PATTERN]: 'an X- header name (letters, digits and dashes)',
  [TECH_PREFIX_PATTERN]: 'up to 10 of the characters 0-9, # and *',
  [CALLER_ID_PREFIX_PATTERN]: 'digits, optionally after a leading +',
  [ROUTE_PREFIX_PATTERN]: 'a + followed by up to 15 digits',
};

const FORMAT_WORDS: Record<string, string> = {
  email: 'an e-mail address',
  'date-time': 'an ISO 8601 date-time, e.g. 2026-05-04T10:30:00Z',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  uri: 'a URL',
};

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  integer: 'a whole number',
  number: 'a number',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

export function schemaError(
  errors: FastifySchemaValidationError[],
  dataVar: SchemaErrorDataVar,
  style: SchemaErrorStyle = { fieldCodes: false },
): ApiError {
  const all = errors as SchemaError[];
  const where = dataVar === 'querystring' ? 'query string' : dataVar;
  // Text bound for a SIP message (model/sip-values.ts): say what is wrong, anywhere in a union.
  const unsafe = all.find((e) => e.keyword === 'pattern' && patternOf(e) === SIP_TEXT_PATTERN);
  const e = unsafe ?? primary(all);
  const at = fieldPath(e.instancePath);
  const code = (field: string) =>
    style.fieldCodes && field ? fieldErrorCode(top(field)) : 'invalid_body';

  if (unsafe) {
    return new ApiError(
      code(at),
      `${at || where} must not contain CR, LF, NUL or other control characters (it goes into a SIP message).`,
    );
  }
  if (e.instancePath === '' && e.keyword === 'type') {
    return new ApiError('invalid_body', `The request ${where} must be a JSON object.`);
  }
  if (e.keyword === 'additionalProperties') {
    const name = String(e.params.additionalProperty);
    if (style.fieldCodes && at === '' && name === 'fromNumber') {
      return new ApiError(
        'from_number_not_allowed',
        'fromNumber is not part of the contract and must not be sent; use callerId.',
      );
    }
    return new ApiError(
      'unknown_field',
      `Unknown field ${quoteForReason(name)}${at ? ` in ${at}` : ''}.`,
    );
  }
  if (e.keyword === 'required') {
    const field = join(at, String(e.params.missingProperty));
    return new ApiError(code(field), `${field} is required.`);
  }
  const field = at || where;
  return new ApiError(code(at), `${field} ${mustBe(e, all)}.`);
}

/**
 * The error to report: for a union that failed, the innermost one (its
 * branches say what was expected); otherwise the first.
 */
function primary(all: SchemaError[]): SchemaError {
  const unions = all.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  if (unions.length === 0) return all[0]!;
  return unions.reduce((a, b) => (b.instancePath.length > a.instancePath.length ? b : a));
}

function mustBe(e: SchemaError, all: SchemaError[]): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'anyOf':
    case 'oneOf': {
      const here = all.filter((b) => b.instancePath === e.instancePath && b !== e);
      const consts = here.filter((b) => b.keyword === 'const').map((b) => b.params.allowedValue);
      if (consts.length > 0) return `must be one of ${consts.map(String).join(', ')}`;
      const types = here.filter((b) => b.keyword === 'type').map((b) => typeWords(b.params.type));
      if (types.length > 0) return `must be ${orList(types)}`;
      const formats = here
        .filter((b) => b.keyword === 'format')
        .map(
          (b) =>
            FORMAT_WORDS[String(b.params.format)] ?? `in the ${String(b.params.format)} format`,
        );
      if (formats.length > 0) return `must be ${orList(formats)}`;
      const other = here[0];
      return other ? mustBe(other, all) : 'is not valid';
    }
    case 'type':
      return `must be ${typeWords(p.type)}`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `must be ${e.keyword === 'minimum' ? 'at least' : 'more than'} ${String(p.limit)}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `must be ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${String(p.limit)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `must hold at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must hold at most ${String(p.limit)} items`;
    case 'uniqueItems':
      return `must not hold the same item twice (items ${String(p.i)} and ${String(p.j)})`;
    case 'minProperties':
      return 'must not be empty: send at least one field';
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(p.allowedValue)}`;
    case 'format':
      return `must be ${FORMAT_WORDS[String(p.format)] ?? `in the ${String(p.format)} format`}`;
    case 'pattern': {
      const words = PATTERN_WORDS[patternOf(e)];
      return words ? `must be ${words}` : 'has the wrong form';
    }
    case 'propertyNames':
      return `has a name that is not allowed: ${quoteForReason(String(p.propertyName))}${namesRule(all)}`;
    default:
      return 'is not valid';
  }
}

/** The rule a refused property name broke (ajv reports it beside propertyNames). */
function namesRule(all: SchemaError[]): string {
  const rule = all.find((b) => b.keyword === 'pattern');
  const words = rule ? PATTERN_WORDS[patternOf(rule)] : undefined;
  return words ? ` (each name must be ${words})` : '';
}

function patternOf(e: SchemaError): string {
  return String((e.params as { pattern?: string }).pattern);
}

function typeWords(t: unknown): string {
  const types = Array.isArray(t) ? t : String(t).split(',');
  return orList(types.map((x) => TYPE_WORDS[String(x)] ?? String(x)));
}

function orList(items: string[]): string {
  const unique = [...new Set(items)];
  if (unique.length <= 1) return unique[0] ?? '';
  return `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
}

/** "/superVariables/a/placeholder" → "superVariables.a.placeholder"; "/x/0" → "x[0]" (RFC 6901 unescaped). */
function fieldPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .slice(1)
    .split('/')
    .map((s) => shortenForReason(s.replace(/~1/g, '/').replace(/~0/g, '~')))
    .reduce((out, seg) => (/^\d+$/.test(seg) ? `${out}[${seg}]` : join(out, seg)), '');
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function top(field: string): string {
  return field.split(/[.[]/)[0]!;
}
