// Full-access keys only: API keys (spec §5.5-5.6) and a reseller's
// subsidiary companies.
import type { FastifyInstance } from 'fastify';
import type { AccountService } from '../../accounts/account-service.js';
import type { ApiKey } from '../../model/entities.js';
import { OPERATION_GROUPS } from '../../model/entities.js';
import type { Store } from '../../store/store.js';
import { ApiError } from '../error-catalogue.js';

const common = { tags: ['Administration'], security: [{ apiKey: [] }] };
const idParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };
// Spec §5.4: one IP, or blank for any; 0.0.0.0 may not stand in for "any".
const ipField = {
  type: ['string', 'null'],
  anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }, { const: '' }, { type: 'null' }],
  not: { const: '0.0.0.0' },
};
const keyProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  preset: { type: 'string', enum: ['full_access', 'custom'] },
  groups: {
    type: 'array',
    items: { type: 'string', enum: [...OPERATION_GROUPS] },
    uniqueItems: true,
  },
  allowedIp: ipField,
};

/** A key as listed: masked, never the secret or its hash. */
export function keyView(k: ApiKey): Record<string, unknown> {
  return {
    id: k.id,
    name: k.name,
    key: k.masked,
    preset: k.fullAccess ? 'full_access' : 'custom',
    groups: k.groups,
    allowedIp: k.allowedIp,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
  };
}

export function registerAdminRoutes(
  app: FastifyInstance,
  store: Store,
  accounts: AccountService,
): void {
  app.post(
    '/api/v1/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Create an API key (the full key is shown only in this answer)',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: keyProperties,
        },
      },
    },
    async (request, reply) => {
      const b = request.body as {
        name: string;
        preset?: string;
        groups?: ApiKey['groups'];
        allowedIp?: string | null;
      };
      const fullAccess = b.preset === 'full_access';
      if (!fullAccess && (!b.groups || b.groups.length === 0)) {
        throw new ApiError(
          'invalid_body',
          'A key that is not full access needs at least one operation group.',
        );
      }
      const { key, secret } = accounts.createApiKey(request.auth.company.id, {
        name: b.name,
        fullAccess,
        groups: b.groups,
        allowedIp: b.allowedIp || null,
      });
      return reply.code(201).send({ ...keyView(key), key: secret });
    },
  );

  app.get(
    '/api/v1/api-keys',
    { config: { access: 'admin' }, schema: { ...common, summary: 'List API keys (masked)' } },
    async (request) => ({
      items: store.apiKeys.list(request.auth.company.id).map(keyView),
    }),
  );

  const find = (companyId: string, id: string): ApiKey => {
    const key = store.apiKeys.get(companyId, id);
    if (!key) throw new ApiError('not_found', 'No API key with this id in this company.');
    return key;
  };
  app.get(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: { ...common, summary: 'Get an API key (masked)', params: idParams },
    },
    async (request) =>
      keyView(find(request.auth.company.id, (request.params as { id: string }).id)),
  );

  // Spec §5.6: name, IP restriction and operations may change; the secret never.
  app.patch(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Edit an API key',
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          properties: keyProperties,
        },
      },
    },
    async (request) => {
      const key = find(request.auth.company.id, (request.params as { id: string }).id);
      const b = request.body as {
        name?: string;
        preset?: string;
        groups?: ApiKey['groups'];
        allowedIp?: string | null;
      };
      const fullAccess = b.preset === undefined ? key.fullAccess : b.preset === 'full_access';
      const groups = fullAccess
        ? [...OPERATION_GROUPS]
        : (b.groups ?? (key.fullAccess ? [] : key.groups));
      if (!fullAccess && groups.length === 0)
        throw new ApiError(
          'invalid_body',
          'A key that is not full access needs at least one operation group.',
        );
      const next: ApiKey = {
        ...key,
        name: b.name ?? key.name,
        fullAccess,
        groups,
        allowedIp: b.allowedIp === undefined ? key.allowedIp : b.allowedIp || null,
      };
      store.apiKeys.update(next);
      return keyView(next);
    },
  );

  // Revoke = permanent removal, effective on the next request (spec §5.6).
  app.delete(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: { ...common, summary: 'Revoke an API key', params: idParams },
    },
    async (request, reply) => {
      const key = find(request.auth.company.id, (request.params as { id: string }).id);
      store.apiKeys.remove(key.companyId, key.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v1/companies',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Create a subsidiary company',
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            plan: {
              type: 'object',
              additionalProperties: false,
              properties: {
                allowOutbound: { type: 'boolean' },
                credits: { type: ['number', 'null'] },
                secondsRemaining: { type: ['integer', 'null'], minimum: 0 },
                maxChannels: { type: ['integer', 'null'], minimum: 0 },
                maxConcurrentCalls: { type: ['integer', 'null'], minimum: 0 },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const b = request.body as { name: string; plan?: Record<string, unknown> };
      const company = accounts.createCompany(b.name, request.auth.company.id, b.plan ?? {});
      return reply.code(201).send({ ...company, plan: store.companies.getPlan(company.id) });
    },
  );

  app.get(
    '/api/v1/companies',
    {
      config: { access: 'admin' },
      schema: { ...common, summary: 'List this company and its subsidiaries' },
    },
    async (request) => {
      const self = request.auth.company;
      return {
        items: [self, ...store.companies.subsidiaries(self.id)].map((c) => ({
          ...c,
          plan: store.companies.getPlan(c.id),
        })),
      };
    },
  );
}
