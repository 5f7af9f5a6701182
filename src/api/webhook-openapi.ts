// The OpenAPI 3.1 `webhooks` section (issue 25): one entry per event type, the
// request the customer's endpoint receives, its headers and body schema.
import type { OpenAPIV3_1 } from 'openapi-types';
import { Type, type TSchema } from 'typebox';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../model/webhook.js';

const CallSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'The call record after the change, as GET /api/v1/phones/calls/{id} shows it.',
  },
);

/** What each type adds to `data` beside `call`. */
const EXTRA: Partial<Record<WebhookEventType, Record<string, TSchema>>> = {
  'call.scheduled': {
    scheduleTime: Type.String({ format: 'date-time', description: 'When the call is due.' }),
    reason: Type.String({ description: 'initial, customer_callback or dropped_call.' }),
  },
  'call.retry_scheduled': {
    scheduleTime: Type.String({ format: 'date-time', description: 'When the retry is due.' }),
    reason: Type.Literal('retry'),
  },
  'call.transfer': {
    transfer: Type.Object(
      {},
      { additionalProperties: true, description: "The call's transferringDetails now." },
    ),
  },
  'call.recording_ready': { recordingFileId: Type.String() },
};

const WHEN: Record<WebhookEventType, string> = {
  'call.accepted': 'The call request was accepted (the record exists).',
  'call.scheduled': 'The call waits for a later time (scheduledAt, a callback, a dropped call).',
  'call.ringing': 'The far end rings (each dial round).',
  'call.answered': 'The far end answered.',
  'call.transfer': 'A transfer started, or its status or consult phase changed.',
  'call.ended': 'The call reached its final status; `data.call` is the whole record.',
  'call.retry_scheduled': 'A dial round ended without a conversation and a retry is planned.',
  'call.recording_ready': 'The recording of an answered call was saved.',
  'call.analysis_completed': "The agent's results changed after the call ended.",
};

function bodySchema(type: WebhookEventType): TSchema {
  return Type.Object({
    id: Type.String({ description: 'Unique; also the webhook-id header: the idempotency key.' }),
    type: Type.Literal(type),
    timestamp: Type.String({ format: 'date-time' }),
    companyId: Type.String(),
    callId: Type.String(),
    data: Type.Object({ ...EXTRA[type], call: CallSchema }),
  });
}

const HEADERS = [
  ['webhook-id', 'The event id (the same on every retry).'],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed.'],
  [
    'webhook-signature',
    'v1,<base64 HMAC-SHA256 of "id.timestamp.body"> with the endpoint secret; two, space-separated, during a rotation.',
  ],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}));

/** `webhooks` for the OpenAPI 3.1 document. */
export function webhookDocs(): Record<string, OpenAPIV3_1.PathItemObject> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: type,
          description: `${WHEN[type]} Signed the Standard Webhooks way; delivered at least once, in order per call. Answer 2xx: 408, 429 (Retry-After honoured) and 5xx are tried again; other answers end the delivery.`,
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: bodySchema(type) } },
          },
          responses: { '2XX': { description: 'Received.' } },
        },
      } as OpenAPIV3_1.PathItemObject,
    ]),
  );
}
