// [VoIP & SIP]: SIP trunks (and the spec's trunk query), outbound routes,
// legacy VoIP phones.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import type { TrunkHealthView } from '../../calls/trunk-resolution.js';
import type { SipTrunk } from '../../model/entities.js';
import {
  E164_PATTERN,
  SIP_HEADER_NAME_PATTERN,
  SIP_HOST_PATTERN,
  SIP_TEXT_PATTERN,
  TECH_PREFIX_PATTERN,
} from '../../model/sip-values.js';
import type { Store } from '../../store/store.js';
import { registerDocumentRoutes } from '../document-routes.js';
import { ApiError } from '../error-catalogue.js';

const E164 = { type: 'string', pattern: E164_PATTERN };
/** Text that goes into a SIP message: no CR, LF, NUL or other control (model/sip-values.ts). */
const SIP_TEXT = { type: 'string', maxLength: 200, pattern: SIP_TEXT_PATTERN };
const ACCESS = 'VoIP & SIP' as const;
const TAG = 'VoIP & SIP';

/** The OPTIONS monitor as the API sees it (calls/trunk-health.ts); absent when pings are off. */
export interface TrunkHealthSource {
  health(trunkId: string): TrunkHealthView;
  /** Picks up a trunk's changed optionsPing, address or state now rather than at the next refresh. */
  refresh(): void;
}

const NOT_CHECKED: TrunkHealthView = { status: 'unknown', checkedAt: null, lastError: null };

export function trunkView(t: SipTrunk, health?: TrunkHealthSource): Record<string, unknown> {
  const { password, ...rest } = t;
  return { ...rest, hasPassword: !!password, health: health?.health(t.id) ?? NOT_CHECKED };
}

export function registerVoipSipRoutes(
  app: FastifyInstance,
  store: Store,
  clock: Clock,
  trunkHealth?: TrunkHealthSource,
): void {
  const view = (t: SipTrunk) => trunkView(t, trunkHealth);
  const trunkExists = (companyId: string, id: string) => {
    if (!store.sipTrunks.get(companyId, id))
      throw new ApiError(
        'sip_trunk_not_found',
        'sipTrunkId does not name a SIP trunk of this company.',
      );
  };

  registerDocumentRoutes<SipTrunk>(app, {
    path: '/api/v1/phones/sip-trunks',
    tag: TAG,
    access: ACCESS,
    noun: 'SIP trunk',
    repo: store.sipTrunks,
    clock,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      host: { type: 'string', minLength: 1, maxLength: 253, pattern: SIP_HOST_PATTERN },
      port: { type: ['integer', 'null'], minimum: 1, maximum: 65535 },
      transport: { type: 'string', enum: ['udp', 'tcp'] },
      username: { anyOf: [SIP_TEXT, { type: 'null' }] },
      password: { anyOf: [SIP_TEXT, { type: 'null' }] },
      defaultCallerId: { anyOf: [E164, { type: 'null' }] },
      callerIds: { type: 'array', items: E164, maxItems: 1000 },
      numberFormat: { type: 'string', enum: ['e164', 'e164_without_plus'] },
      techPrefix: { type: 'string', pattern: TECH_PREFIX_PATTERN },
      headers: {
        type: 'object',
        additionalProperties: { ...SIP_TEXT, maxLength: 1000 },
        propertyNames: { pattern: SIP_HEADER_NAME_PATTERN },
      },
      ratePerMinute: { type: 'number', minimum: 0 },
      isDefault: { type: 'boolean' },
      active: { type: 'boolean' },
      maxChannels: { type: ['integer', 'null'], minimum: 1 },
      optionsPing: {
        type: 'boolean',
        description: 'Ping the trunk with OPTIONS to learn whether it is up (default false).',
      },
    },
    required: ['name', 'host'],
    build: (b) => ({
      name: b.name as string,
      host: b.host as string,
      port: (b.port as number | null | undefined) ?? null,
      transport: (b.transport as 'udp' | 'tcp' | undefined) ?? 'udp',
      username: (b.username as string | undefined) ?? null,
      password: (b.password as string | undefined) ?? null,
      defaultCallerId: (b.defaultCallerId as string | undefined) ?? null,
      callerIds: (b.callerIds as string[] | undefined) ?? [],
      numberFormat: (b.numberFormat as SipTrunk['numberFormat'] | undefined) ?? 'e164',
      techPrefix: (b.techPrefix as string | undefined) ?? '',
      headers: (b.headers as Record<string, string> | undefined) ?? {},
      ratePerMinute: (b.ratePerMinute as number | undefined) ?? 0,
      isDefault: (b.isDefault as boolean | undefined) ?? false,
      active: (b.active as boolean | undefined) ?? true,
      maxChannels: (b.maxChannels as number | null | undefined) ?? null,
      optionsPing: (b.optionsPing as boolean | undefined) ?? false,
    }),
    afterSave: (t) => {
      trunkHealth?.refresh();
      if (!t.isDefault) return;
      for (const other of store.sipTrunks.list(t.companyId)) {
        if (other.id !== t.id && other.isDefault)
          store.sipTrunks.update({ ...other, isDefault: false });
      }
    },
    beforeDelete: (t) => {
      const used =
        store.outboundRoutes.list(t.companyId).some((r) => r.sipTrunkId === t.id) ||
        store.voipPhones.list(t.companyId).some((p) => p.sipTrunkId === t.id);
      if (used)
        throw new ApiError('conflict', 'Outbound routes or VoIP phones still use this SIP trunk.');
    },
    view,
  });

  // Spec §4.3: where a sipTrunkId is obtained.
  app.post(
    '/api/v1/phones/sip-trunks/query',
    {
      config: { access: ACCESS },
      schema: {
        tags: [TAG],
        summary: 'Query SIP trunks',
        security: [{ apiKey: [] }],
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: {
            name: { type: 'string' },
            host: { type: 'string' },
            isDefault: { type: 'boolean' },
            active: { type: 'boolean' },
            page: { type: 'integer', minimum: 1, default: 1 },
            pageSize: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
          },
        },
      },
    },
    async (request) => {
      const q = (request.body ?? {}) as {
        name?: string;
        host?: string;
        isDefault?: boolean;
        active?: boolean;
        page?: number;
        pageSize?: number;
      };
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 50;
      const all = store.sipTrunks
        .list(request.auth.company.id)
        .filter(
          (t) =>
            (q.name === undefined || t.name.toLowerCase().includes(q.name.toLowerCase())) &&
            (q.host === undefined || t.host === q.host) &&
            (q.isDefault === undefined || t.isDefault === q.isDefault) &&
            (q.active === undefined || t.active === q.active),
        );
      return {
        items: all.slice((page - 1) * pageSize, page * pageSize).map(view),
        total: all.length,
        page,
        pageSize,
      };
    },
  );

  registerDocumentRoutes(app, {
    path: '/api/v1/phones/outbound-routes',
    tag: TAG,
    access: ACCESS,
    noun: 'outbound route',
    repo: store.outboundRoutes,
    clock,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      prefix: { type: 'string', pattern: '^\\+[0-9]{0,15}$' },
      sipTrunkId: { type: 'string', minLength: 1 },
      priority: { type: 'integer', minimum: 0 },
    },
    required: ['prefix', 'sipTrunkId'],
    build: (b) => ({
      name: (b.name as string | undefined) ?? (b.prefix as string),
      prefix: b.prefix as string,
      sipTrunkId: b.sipTrunkId as string,
      priority: (b.priority as number | undefined) ?? 100,
    }),
    check: (r) => trunkExists(r.companyId, r.sipTrunkId),
  });

  registerDocumentRoutes(app, {
    path: '/api/v1/phones/voip-phones',
    tag: TAG,
    access: ACCESS,
    noun: 'VoIP phone',
    repo: store.voipPhones,
    clock,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      sipTrunkId: { type: 'string', minLength: 1 },
    },
    required: ['name', 'sipTrunkId'],
    build: (b) => ({ name: b.name as string, sipTrunkId: b.sipTrunkId as string }),
    check: (p) => trunkExists(p.companyId, p.sipTrunkId),
  });
}
