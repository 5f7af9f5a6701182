// [Workflows] Webhook endpoints (issue 25): where a company's call events are
// pushed, which types, the signing secret (shown once, at creation and at
// each rotation), and the deliveries with a manual retry.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Clock } from '../../clock.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEndpoint } from '../../model/webhook.js';
import type { Store } from '../../store/store.js';
import type { DestinationGuard } from '../../net/destination-guard.js';
import { newWebhookSecret } from '../../webhooks/webhook-signer.js';
import { ApiError } from '../error-catalogue.js';
import { IdParams, nullable, stringEnum } from '../schemas/shared.js';

const ACCESS = 'Workflows' as const;
const TAG = 'Workflows';

export interface WebhookRouteSettings {
  allowHttp: boolean;
  secretOverlapSeconds: number;
  guard: DestinationGuard;
  /** Told when a retry was asked (the worker looks at once). */
  poke?: () => void;
}

const EventTypes = Type.Array(stringEnum(WEBHOOK_EVENT_TYPES), {
  uniqueItems: true,
  description: 'The event types sent to this endpoint; empty or absent: all of them.',
});
const FIELDS = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'https:// (http:// only when the operator allows it).',
  }),
  eventTypes: EventTypes,
  enabled: Type.Boolean(),
  description: nullable(Type.String({ maxLength: 500 })),
};
const CreateBody = Type.Object(
  {
    url: FIELDS.url,
    eventTypes: Type.Optional(FIELDS.eventTypes),
    enabled: Type.Optional(FIELDS.enabled),
    description: Type.Optional(FIELDS.description),
  },
  { additionalProperties: false },
);
const PatchBody = Type.Object(
  {
    url: Type.Optional(FIELDS.url),
    eventTypes: Type.Optional(FIELDS.eventTypes),
    enabled: Type.Optional(FIELDS.enabled),
    description: Type.Optional(FIELDS.description),
  },
  { additionalProperties: false, minProperties: 1 },
);
const EndpointSchema = Type.Object({
  id: Type.String(),
  companyId: Type.String(),
  url: Type.String(),
  eventTypes: EventTypes,
  enabled: Type.Boolean(),
  description: nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  modifiedAt: Type.String({ format: 'date-time' }),
});
const WithSecret = Type.Intersect([
  EndpointSchema,
  Type.Object({
    secret: Type.String({
      description:
        'The signing secret (whsec_…), shown only now: verify each delivery with it (Standard Webhooks).',
    }),
  }),
]);
const DeliverySchema = Type.Object({
  id: Type.String(),
  endpointId: Type.String(),
  eventId: Type.String({ description: 'The `webhook-id` header: the idempotency key.' }),
  eventType: stringEnum(WEBHOOK_EVENT_TYPES),
  callId: nullable(Type.String()),
  status: stringEnum(['pending', 'delivered', 'failed', 'cancelled'] as const),
  attempts: Type.Integer(),
  lastResponseCode: nullable(
    Type.Integer({ description: '0: no HTTP answer (network error, timeout, refused address).' }),
  ),
  lastError: nullable(Type.String()),
  nextAttemptAt: nullable(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
  deliveredAt: nullable(Type.String({ format: 'date-time' })),
});
const DeliveryParams = Type.Object({ id: Type.String(), deliveryId: Type.String() });
const DeliveriesQuery = Type.Object({
  limit: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,3}$', description: '1-500, default 100.' }),
  ),
});

export function registerWebhookRoutes(
  app: FastifyInstance,
  store: Store,
  clock: Clock,
  settings: WebhookRouteSettings,
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => new Date(clock.now()).toISOString();
  const common = { tags: [TAG] };
  const found = (companyId: string, id: string): WebhookEndpoint => {
    const e = store.webhooks.getEndpoint(companyId, id);
    if (!e) throw new ApiError('not_found', 'No such webhook endpoint in this company.');
    return e;
  };
  const checkUrl = (url: string): void => {
    const refusal = urlRefusal(url, settings);
    if (refusal) throw new ApiError('invalid_webhook_url', refusal);
  };

  api.post(
    '/api/v1/webhooks',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Create a webhook endpoint',
        description:
          'Call events are pushed to it, signed the Standard Webhooks way (webhook-id, webhook-timestamp, webhook-signature). The answer carries the signing secret; it is not shown again.',
        body: CreateBody,
        response: { 201: WithSecret },
      },
    },
    async (request, reply) => {
      const b = request.body;
      checkUrl(b.url);
      const at = now();
      const secret = newWebhookSecret();
      const endpoint = store.webhooks.insertEndpoint(
        {
          id: randomUUID(),
          companyId: request.auth.company.id,
          url: b.url,
          eventTypes: b.eventTypes ?? [],
          enabled: b.enabled ?? true,
          description: b.description ?? null,
          createdAt: at,
          modifiedAt: at,
        },
        secret,
      );
      void reply.code(201);
      return { ...endpoint, secret };
    },
  );

  api.get(
    '/api/v1/webhooks',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'List webhook endpoints',
        response: { 200: Type.Object({ items: Type.Array(EndpointSchema) }) },
      },
    },
    async (request) => ({ items: store.webhooks.listEndpoints(request.auth.company.id) }),
  );

  api.get(
    '/api/v1/webhooks/:id',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Get a webhook endpoint',
        params: IdParams,
        response: { 200: EndpointSchema },
      },
    },
    async (request) => found(request.auth.company.id, request.params.id),
  );

  api.patch(
    '/api/v1/webhooks/:id',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Change a webhook endpoint',
        description:
          'enabled: false stops it receiving: no new event is queued for it; deliveries already pending wait and go out once it is enabled again.',
        params: IdParams,
        body: PatchBody,
        response: { 200: EndpointSchema },
      },
    },
    async (request) => {
      const e = found(request.auth.company.id, request.params.id);
      if (request.body.url !== undefined) checkUrl(request.body.url);
      const updated = store.webhooks.updateEndpoint(e.id, request.body, now())!;
      settings.poke?.();
      return updated;
    },
  );

  api.delete(
    '/api/v1/webhooks/:id',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Delete a webhook endpoint (its pending deliveries are dropped)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const e = found(request.auth.company.id, request.params.id);
      store.webhooks.removeEndpoint(e.id);
      void reply.code(204);
      return null;
    },
  );

  api.post(
    '/api/v1/webhooks/:id/rotate-secret',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Rotate the signing secret',
        description:
          'Answers the new secret (shown only now). The old one keeps signing beside it (two signatures in webhook-signature) until previousSecretExpiresAt.',
        params: IdParams,
        response: {
          200: Type.Object({
            secret: Type.String(),
            previousSecretExpiresAt: Type.String({ format: 'date-time' }),
          }),
        },
      },
    },
    async (request) => {
      const e = found(request.auth.company.id, request.params.id);
      const secret = newWebhookSecret();
      const expires = new Date(clock.now() + settings.secretOverlapSeconds * 1000).toISOString();
      store.webhooks.rotateSecret(e.id, secret, expires, now());
      return { secret, previousSecretExpiresAt: expires };
    },
  );

  api.get(
    '/api/v1/webhooks/:id/deliveries',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: "An endpoint's deliveries, newest first",
        params: IdParams,
        querystring: DeliveriesQuery,
        response: { 200: Type.Object({ items: Type.Array(DeliverySchema) }) },
      },
    },
    async (request) => {
      const e = found(request.auth.company.id, request.params.id);
      const limit = Math.min(500, Math.max(1, Number(request.query.limit ?? 100)));
      return { items: store.webhooks.deliveries(e.id, limit) };
    },
  );

  api.post(
    '/api/v1/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config: { access: ACCESS },
      schema: {
        ...common,
        summary: 'Send a delivery again now (failed or delivered ones too)',
        params: DeliveryParams,
        response: { 200: DeliverySchema },
      },
    },
    async (request) => {
      const e = found(request.auth.company.id, request.params.id);
      const d = store.webhooks.delivery(e.id, request.params.deliveryId);
      if (!d) throw new ApiError('not_found', 'No such delivery for this endpoint.');
      store.webhooks.retryNow(d.id, clock.now());
      settings.poke?.();
      return store.webhooks.delivery(e.id, d.id)!;
    },
  );
}

/** Why a webhook URL is refused at creation, or undefined. */
function urlRefusal(url: string, s: WebhookRouteSettings): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'url must be an absolute http(s) URL.';
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && s.allowHttp)) {
    return s.allowHttp ? 'url must be http:// or https://.' : 'url must be https://.';
  }
  if (u.username || u.password) return 'url must not carry credentials.';
  const refused = s.guard.literalRefusal(u);
  if (refused) {
    return `url points at a ${refused} address; webhooks go to public addresses only (webhooks.allowedNetworks).`;
  }
  return undefined;
}
