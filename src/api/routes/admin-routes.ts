// Full-access keys only: API keys (spec §5.5-5.6) and a reseller's
// subsidiary companies.
import { BlockList, isIP } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AccountService } from '../../accounts/account-service.js';
import type { ApiKey, Company, Plan } from '../../model/entities.js';
import { OPERATION_GROUPS } from '../../model/entities.js';
import type { Store } from '../../store/store.js';
import { ApiError } from '../error-catalogue.js';
import { IdParams, ListOf, nullable, stringEnum } from '../schemas/shared.js';

const common = { tags: ['Administration'], security: [{ apiKey: [] }] };

// Spec §5.4: one IP, or blank (empty or null) for any.
const AllowedIp = nullable(
  Type.String({
    anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }, { maxLength: 0 }],
    description:
      'The one client address the key may be used from; empty or null for any. An unspecified address (0.0.0.0, ::) is refused: no client has it.',
    example: '203.0.113.7',
  }),
);

const KEY_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  preset: stringEnum(['full_access', 'custom'], 'Default: custom.'),
  groups: Type.Array(stringEnum(OPERATION_GROUPS), {
    uniqueItems: true,
    description: 'The operation groups a custom key may use (at least one).',
  }),
  allowedIp: AllowedIp,
};
const CreateKeyBody = Type.Object(
  {
    name: KEY_FIELDS.name,
    preset: Type.Optional(KEY_FIELDS.preset),
    groups: Type.Optional(KEY_FIELDS.groups),
    allowedIp: Type.Optional(KEY_FIELDS.allowedIp),
  },
  { additionalProperties: false },
);
const PatchKeyBody = Type.Partial(Type.Object(KEY_FIELDS), {
  additionalProperties: false,
  minProperties: 1,
});

const KeyViewSchema = Type.Object({
  id: Type.String(),
  name: KEY_FIELDS.name,
  key: Type.String({ description: 'Masked; the full key only in the answer of its creation.' }),
  preset: KEY_FIELDS.preset,
  groups: KEY_FIELDS.groups,
  allowedIp: nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: nullable(Type.String({ format: 'date-time' })),
});
type KeyView = Static<typeof KeyViewSchema>;

const PlanFields = {
  allowOutbound: Type.Boolean(),
  credits: nullable(Type.Number({ description: 'null = unlimited.' })),
  secondsRemaining: nullable(Type.Integer({ minimum: 0 })),
  maxChannels: nullable(Type.Integer({ minimum: 0 })),
  maxConcurrentCalls: nullable(Type.Integer({ minimum: 0 })),
};
const CreateCompanyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    plan: Type.Optional(Type.Partial(Type.Object(PlanFields), { additionalProperties: false })),
  },
  { additionalProperties: false },
);
const CompanyViewSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  parentId: nullable(Type.String()),
  settings: Type.Object(
    {},
    { additionalProperties: true, description: 'Company settings (calling rules and others).' },
  ),
  createdAt: Type.String({ format: 'date-time' }),
  plan: Type.Optional(
    Type.Object({
      companyId: Type.String(),
      ...PlanFields,
      modifiedAt: Type.String({ format: 'date-time' }),
    }),
  ),
});

/** A key as listed: masked, never the secret or its hash. */
export function keyView(k: ApiKey): KeyView {
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

const UNSPECIFIED = new BlockList();
UNSPECIFIED.addAddress('0.0.0.0', 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');

/** 0.0.0.0 or :: in any spelling (::0, 0:0:0:0:0:0:0:0, ::ffff:0.0.0.0): an address no client has. */
export function isUnspecifiedAddress(ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && UNSPECIFIED.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The stored restriction: null for any; an unspecified address would lock the key out. */
function allowedIpOf(ip: string | null): string | null {
  if (ip && isUnspecifiedAddress(ip)) {
    throw new ApiError(
      'invalid_body',
      'allowedIp must be the single client address the key may be used from, not an unspecified address such as 0.0.0.0 or ::; leave it empty or null to allow any address.',
    );
  }
  return ip || null;
}

const needsGroups = () =>
  new ApiError('invalid_body', 'A key that is not full access needs at least one operation group.');

export function registerAdminRoutes(
  app: FastifyInstance,
  store: Store,
  accounts: AccountService,
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const withPlan = (c: Company): Company & { plan?: Plan } => ({
    ...c,
    plan: store.companies.getPlan(c.id),
  });

  api.post(
    '/api/v1/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Create an API key (the full key is shown only in this answer)',
        body: CreateKeyBody,
        response: { 201: KeyViewSchema },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const fullAccess = b.preset === 'full_access';
      if (!fullAccess && (!b.groups || b.groups.length === 0)) throw needsGroups();
      const allowedIp = allowedIpOf(b.allowedIp ?? null);
      const { key, secret } = accounts.createApiKey(request.auth.company.id, {
        name: b.name,
        fullAccess,
        groups: b.groups,
        allowedIp,
      });
      return reply.code(201).send({ ...keyView(key), key: secret });
    },
  );

  api.get(
    '/api/v1/api-keys',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'List API keys (masked)',
        response: { 200: ListOf(KeyViewSchema) },
      },
    },
    async (request) => ({
      items: store.apiKeys.list(request.auth.company.id).map(keyView),
    }),
  );

  const find = (companyId: string, id: string): ApiKey => {
    const key = store.apiKeys.get(companyId, id);
    if (!key) throw new ApiError('not_found', 'No API key with this id in this company.');
    return key;
  };
  api.get(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Get an API key (masked)',
        params: IdParams,
        response: { 200: KeyViewSchema },
      },
    },
    async (request) => keyView(find(request.auth.company.id, request.params.id)),
  );

  // Spec §5.6: name, IP restriction and operations may change; the secret never.
  api.patch(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Edit an API key',
        params: IdParams,
        body: PatchKeyBody,
        response: { 200: KeyViewSchema },
      },
    },
    async (request) => {
      const key = find(request.auth.company.id, request.params.id);
      const b = request.body;
      const fullAccess = b.preset === undefined ? key.fullAccess : b.preset === 'full_access';
      const groups = fullAccess
        ? [...OPERATION_GROUPS]
        : (b.groups ?? (key.fullAccess ? [] : key.groups));
      if (!fullAccess && groups.length === 0) throw needsGroups();
      const next: ApiKey = {
        ...key,
        name: b.name ?? key.name,
        fullAccess,
        groups,
        allowedIp: b.allowedIp === undefined ? key.allowedIp : allowedIpOf(b.allowedIp),
      };
      store.apiKeys.update(next);
      return keyView(next);
    },
  );

  // Revoke = permanent removal, effective on the next request (spec §5.6).
  api.delete(
    '/api/v1/api-keys/:id',
    {
      config: { access: 'admin' },
      schema: { ...common, summary: 'Revoke an API key', params: IdParams },
    },
    async (request, reply) => {
      const key = find(request.auth.company.id, request.params.id);
      store.apiKeys.remove(key.companyId, key.id);
      return reply.code(204).send();
    },
  );

  api.post(
    '/api/v1/companies',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'Create a subsidiary company',
        body: CreateCompanyBody,
        response: { 201: CompanyViewSchema },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const company = accounts.createCompany(b.name, request.auth.company.id, b.plan ?? {});
      return reply.code(201).send(withPlan(company));
    },
  );

  api.get(
    '/api/v1/companies',
    {
      config: { access: 'admin' },
      schema: {
        ...common,
        summary: 'List this company and its subsidiaries',
        response: { 200: ListOf(CompanyViewSchema) },
      },
    },
    async (request) => {
      const self = request.auth.company;
      return { items: [self, ...store.companies.subsidiaries(self.id)].map(withPlan) };
    },
  );
}
