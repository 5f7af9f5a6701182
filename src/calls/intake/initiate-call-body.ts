// The call-initiation body (spec §2.1) as one schema: the HTTP layer
// validates requests with it, the OpenAPI document shows it, and its type is
// what the calls domain reads. The rules a schema cannot say (E.164 validity,
// agentId unless internal, the caller ID form, scheduledAt, the alternates'
// separators) are in initiate-call-request.ts. Defaults are stated here once.
import { Type, type Static } from 'typebox';
import { SUPER_VARIABLE_TYPES } from '../../model/call-record.js';
import {
  CALL_HEADER_NAME_PATTERN,
  CALL_HEADERS_MAX_BYTES,
  CALLER_ID_PREFIX_PATTERN,
  SIP_TEXT_PATTERN,
} from '../../model/sip-values.js';

export const CONTEXT_FOR_AI_MAX = 12_000;
export const RETRY_DELAY_MINUTES = { min: 30, max: 1440, default: 30 } as const;
/** DESIGN: 0 to 3 accepted; 0 and 1 both mean a single attempt. */
export const MAX_RETRIES = { min: 0, max: 3, default: 3 } as const;

const text = (description?: string) => Type.String(description ? { description } : {});
const flag = (description?: string, dflt?: boolean) =>
  Type.Boolean({
    ...(description ? { description } : {}),
    ...(dflt !== undefined ? { default: dflt } : {}),
  });
const stringMap = (description?: string) =>
  Type.Record(Type.String(), Type.String(), description ? { description } : {});

export const SuperVariableSchema = Type.Object(
  {
    placeholder: Type.String({ minLength: 1 }),
    value: Type.String(),
    type: Type.Optional(Type.Union(SUPER_VARIABLE_TYPES.map((t) => Type.Literal(t)))),
  },
  { additionalProperties: false },
);

export const InitiateCallBodySchema = Type.Object(
  {
    sipTrunkId: Type.Optional(
      text(
        'Trunk to dial from; may be omitted when an outbound route or default trunk can carry the call.',
      ),
    ),
    voipPhoneId: Type.Optional(text('Legacy line id; resolved to a trunk.')),
    callerId: Type.Optional(text('E.164 number or SIP URI the trunk may present.')),
    outBoundCallerIdPrefix: Type.Optional(
      Type.String({
        pattern: CALLER_ID_PREFIX_PATTERN,
        description: "Picks the trunk's caller ID starting with this prefix.",
      }),
    ),
    destinationNumber: Type.String({ description: 'E.164.', example: '+14155550123' }),
    isInternalCall: Type.Optional(flag(undefined, false)),
    agentId: Type.Optional(text('Required for outbound AI calls.')),
    contextForAi: Type.Optional(Type.String({ maxLength: CONTEXT_FOR_AI_MAX })),
    emailAddress: Type.Optional(Type.String({ format: 'email' })),
    dynamicVariables: Type.Optional(stringMap()),
    superVariables: Type.Optional(Type.Record(Type.String(), SuperVariableSchema)),
    metadata: Type.Optional(stringMap('Keys starting with scenario_ are stripped.')),
    sipHeaders: Type.Optional(
      Type.Record(
        Type.String(),
        Type.String({ minLength: 1, maxLength: 512, pattern: SIP_TEXT_PATTERN }),
        {
          propertyNames: { pattern: CALL_HEADER_NAME_PATTERN },
          maxProperties: 16,
          description: `Headers added to each INVITE of this call: X- headers and User-to-User only, no control characters, at most ${CALL_HEADERS_MAX_BYTES} bytes in all. A header of the same name set on the trunk is replaced.`,
          example: { 'X-Crm-Lead': 'L-4521', 'User-to-User': '56a390f3d2b7310023a2;encoding=hex' },
        },
      ),
    ),
    overrideTimeRestriction: Type.Optional(flag(undefined, false)),
    overrideDayRestriction: Type.Optional(flag(undefined, false)),
    useAntiHarassmentProtection: Type.Optional(
      flag('Default: the company setting (on unless changed).'),
    ),
    isWelcomeMessageAIGenerated: Type.Optional(flag(undefined, false)),
    welcomeMessageOverride: Type.Optional(Type.String()),
    scheduledAt: Type.Optional(
      text(
        "ISO 8601 date-time. With an offset (Z, ±hh:mm) an instant; without one, local time in the destination number's time zone.",
      ),
    ),
    retryDelayMinutes: Type.Optional(
      Type.Integer({
        minimum: RETRY_DELAY_MINUTES.min,
        maximum: RETRY_DELAY_MINUTES.max,
        default: RETRY_DELAY_MINUTES.default,
      }),
    ),
    maxRetries: Type.Optional(
      Type.Integer({
        minimum: MAX_RETRIES.min,
        maximum: MAX_RETRIES.max,
        default: MAX_RETRIES.default,
      }),
    ),
    additionalPhoneNumbers: Type.Optional(
      Type.Union(
        [Type.String(), Type.Number(), Type.Array(Type.Union([Type.String(), Type.Number()]))],
        {
          description:
            'Alternates tried in order, each through the protections at dial time. Commas, semicolons and newlines separate; spaces, dots, dashes and parentheses are formatting when the whole item is a valid E.164 number, separators otherwise. An item that is not a valid number is a 400 naming it.',
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'A field sent as null is the same as a field left out.',
  },
);

export type InitiateCallBody = Static<typeof InitiateCallBodySchema>;

/** Every field of the contract (spec §2.1); anything else is refused. */
export const INITIATE_CALL_FIELDS = Object.keys(InitiateCallBodySchema.properties) as ReadonlyArray<
  keyof InitiateCallBody
>;
