// OpenAPI description of the call-initiation body and answers (spec §2.1-2.4).
// The body is checked by the calls domain (precise error codes), so this
// schema documents the contract rather than enforcing it.

const stringMap = { type: 'object', additionalProperties: { type: 'string' } };

export const initiateCallBody = {
  type: 'object',
  additionalProperties: false,
  required: ['destinationNumber'],
  properties: {
    sipTrunkId: {
      type: 'string',
      description:
        'Trunk to dial from; may be omitted when an outbound route or default trunk can carry the call.',
    },
    voipPhoneId: { type: 'string', description: 'Legacy line id; resolved to a trunk.' },
    callerId: { type: 'string', description: 'E.164 number or SIP URI the trunk may present.' },
    outBoundCallerIdPrefix: {
      type: 'string',
      description: "Picks the trunk's caller ID starting with this prefix.",
    },
    destinationNumber: { type: 'string', description: 'E.164.', example: '+14155550123' },
    isInternalCall: { type: 'boolean' },
    agentId: { type: 'string', description: 'Required for outbound AI calls.' },
    contextForAi: { type: 'string', maxLength: 12000 },
    emailAddress: { type: 'string', format: 'email' },
    dynamicVariables: stringMap,
    superVariables: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['placeholder', 'value'],
        properties: {
          placeholder: { type: 'string' },
          value: { type: 'string' },
          type: { type: 'string', enum: ['text', 'number', 'boolean', 'date', 'time'] },
        },
      },
    },
    metadata: { ...stringMap, description: 'Keys starting with scenario_ are stripped.' },
    overrideTimeRestriction: { type: 'boolean', default: false },
    overrideDayRestriction: { type: 'boolean', default: false },
    useAntiHarassmentProtection: {
      type: 'boolean',
      description: 'Default: the company setting (on unless changed).',
    },
    isWelcomeMessageAIGenerated: { type: 'boolean' },
    welcomeMessageOverride: { type: 'string' },
    scheduledAt: {
      type: 'string',
      description:
        "ISO 8601 date-time. With an offset (Z, ±hh:mm) an instant; without one, local time in the destination number's time zone.",
    },
    retryDelayMinutes: { type: 'integer', minimum: 30, maximum: 1440, default: 30 },
    maxRetries: { type: 'integer', minimum: 0, maximum: 3, default: 3 },
    additionalPhoneNumbers: {
      description:
        'Alternates tried in order, each through the protections at dial time. Commas, semicolons and newlines separate; spaces, dots, dashes and parentheses are formatting when the whole item is a valid E.164 number, separators otherwise. An item that is not a valid number is a 400 naming it.',
      anyOf: [
        { type: 'string' },
        { type: 'number' },
        { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      ],
    },
  },
};

export const errorBody = {
  type: 'object',
  required: ['error', 'reason'],
  properties: { error: { type: 'string' }, reason: { type: 'string' } },
};

/** Refusals (spec §2.4) carry httpStatus and details; the generic 403/429 only error and reason. */
export const refusalBody = {
  type: 'object',
  required: ['error', 'reason'],
  properties: {
    error: { type: 'string' },
    reason: { type: 'string' },
    httpStatus: { type: 'integer' },
    details: {
      type: 'object',
      additionalProperties: true,
      properties: {
        retryable: { type: 'boolean' },
        retryAfterSeconds: { type: 'number' },
        nextAllowedAt: { type: 'string', format: 'date-time' },
        lastCallAt: { type: 'string', format: 'date-time' },
        permanent: { type: 'boolean' },
        blockedUntil: { type: 'string' },
        alreadyScheduled: { type: 'boolean' },
        liveCallId: { type: 'string' },
        liveCallMongoId: { type: 'string' },
        liveCallStatus: { type: 'string' },
        scheduledAt: { type: 'string' },
      },
    },
  },
};

export const initiateCallResponses = {
  200: {
    type: 'object',
    required: ['callId', 'scheduled'],
    properties: {
      callId: { type: 'string' },
      scheduled: { type: 'boolean' },
      scheduleTime: { type: 'string', format: 'date-time' },
      reason: { type: 'string' },
    },
  },
  400: errorBody,
  402: errorBody,
  403: refusalBody,
  409: refusalBody,
  429: refusalBody,
};
