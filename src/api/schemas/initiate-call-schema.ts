// The answers of initiate-call in the OpenAPI document (spec §2.2-2.4); the
// body's schema is calls/intake/initiate-call-body.ts.

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
