// [VoIP & SIP]: SIP trunks (and the spec's trunk query), outbound routes,
// legacy VoIP phones.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Clock } from '../../clock.js';
import type { TrunkHealthView } from '../../calls/trunk-resolution.js';
import { DEFAULT_TRUNK_IDENTITY, type SipTrunk } from '../../model/entities.js';
import {
  E164_PATTERN,
  ROUTE_PREFIX_PATTERN,
  SIP_HEADER_NAME_PATTERN,
  SIP_HOST_PATTERN,
  TECH_PREFIX_PATTERN,
} from '../../model/sip-values.js';
import type { Store } from '../../store/store.js';
import { registerDocumentRoutes } from '../document-routes.js';
import {
  checkTlsMaterial,
  patchedTls,
  registerView,
  registrationOf,
  SIP_TEXT,
  tlsView,
  TRUNK_REGISTER_FIELD,
  TRUNK_REGISTER_VIEW,
  TRUNK_TLS_FIELD,
  TRUNK_TLS_VIEW,
} from './trunk-carrier-fields.js';
import { ApiError } from '../error-catalogue.js';
import {
  nullable,
  OwnedDocumentFields,
  PageOf,
  PagingFields,
  paging,
  stringEnum,
} from '../schemas/shared.js';

const E164 = () => Type.String({ pattern: E164_PATTERN });
const ACCESS = 'VoIP & SIP' as const;
const TAG = 'VoIP & SIP';

/** What a client may send for a trunk (create: name and host required; PATCH: any of them). */
const TRUNK_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  host: Type.String({ minLength: 1, maxLength: 253, pattern: SIP_HOST_PATTERN }),
  port: nullable(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: 'null: resolve by DNS SRV (RFC 3263), else 5060.',
    }),
  ),
  transport: stringEnum(
    ['udp', 'tcp', 'tls'],
    'tls: SIP over TLS (RFC 3261 §26), port 5061 unless given; see `tls`.',
  ),
  username: nullable(SIP_TEXT()),
  password: nullable(SIP_TEXT()),
  defaultCallerId: nullable(E164()),
  callerIds: Type.Array(E164(), {
    maxItems: 1000,
    description: 'Numbers this trunk may present as caller ID.',
  }),
  numberFormat: stringEnum(
    ['e164', 'e164_without_plus'],
    'How the destination is written in the Request-URI.',
  ),
  techPrefix: Type.String({ pattern: TECH_PREFIX_PATTERN }),
  headers: Type.Record(Type.String(), SIP_TEXT(1000), {
    propertyNames: { pattern: SIP_HEADER_NAME_PATTERN },
    description: 'Extra headers on every INVITE (X-…).',
  }),
  ratePerMinute: Type.Number({ minimum: 0 }),
  isDefault: Type.Boolean(),
  active: Type.Boolean(),
  maxChannels: nullable(
    Type.Integer({ minimum: 1, description: 'Simultaneous calls; null = no limit.' }),
  ),
  optionsPing: Type.Boolean({
    description: 'Ping the trunk with OPTIONS to learn whether it is up (default false).',
  }),
  identity: Type.Object(
    {
      fromUser: stringEnum(
        ['caller_id', 'username', 'fixed'],
        "The From URI's user: the call's caller ID (default), the trunk's username, or fixedFromUser (the caller ID then goes in P-Asserted-Identity / P-Preferred-Identity). Without a username or fixedFromUser, the caller ID.",
      ),
      fixedFromUser: nullable(Type.String({ pattern: '^[A-Za-z0-9+._-]{1,64}$' })),
      displayName: nullable(SIP_TEXT(100)),
      assertedIdentity: stringEnum(
        ['pai', 'ppi', 'both', 'none'],
        'RFC 3325 headers carrying the caller ID: P-Asserted-Identity (default), P-Preferred-Identity, both, or none.',
      ),
      diversion: Type.Boolean({
        description: 'Add Diversion (RFC 5806) with the caller ID; default false.',
      }),
    },
    {
      additionalProperties: false,
      description:
        'How the caller is presented (withheld caller ID: anonymous From and Privacy: id regardless). Default: caller ID in From, P-Asserted-Identity, no display name, no Diversion.',
    },
  ),
  tls: TRUNK_TLS_FIELD,
  media: stringEnum(
    ['rtp', 'srtp', 'srtp-optional'],
    "The call's audio: rtp (default) plain RTP/AVP; srtp: RTP/SAVP with SDES keys (RFC 4568, AES_CM_128_HMAC_SHA1_80 or _32), the call ends sdp_error when the answer has no usable key; srtp-optional: RTP/AVP offered with keys, SRTP when the answer carries one, else plain RTP. Use srtp with transport tls: SDES keys travel in the SDP.",
  ),
  register: TRUNK_REGISTER_FIELD,
};

const { password: _password, optionsPing, ...SHOWN_TRUNK_FIELDS } = TRUNK_FIELDS;

export const TrunkHealthSchema = Type.Object(
  {
    status: stringEnum(
      ['online', 'offline', 'unknown'],
      'unknown: not pinged (optionsPing off) or not checked yet.',
    ),
    checkedAt: nullable(Type.String({ format: 'date-time' })),
    lastError: nullable(Type.String()),
    registration: Type.Optional(
      Type.Object(
        {
          state: stringEnum(['registering', 'registered', 'unregistered']),
          lastStatus: nullable(Type.Integer({ description: 'Final status of the last REGISTER.' })),
          lastError: nullable(Type.String()),
          registeredAt: nullable(Type.String({ format: 'date-time' })),
          expiresAt: nullable(Type.String({ format: 'date-time' })),
          refreshes: Type.Integer({ description: 'Successful refreshes since it registered.' }),
        },
        { description: 'Registration trunks only: the binding with the registrar.' },
      ),
    ),
  },
  { description: "The OPTIONS monitor's view of the trunk, and its registration." },
);

/** A trunk as the API shows it: never the password or the TLS key, whether there is one; its health. */
export const TrunkViewSchema = Type.Object({
  ...OwnedDocumentFields,
  ...SHOWN_TRUNK_FIELDS,
  tls: TRUNK_TLS_VIEW,
  register: Type.Optional(TRUNK_REGISTER_VIEW),
  // absent on trunks stored before it existed
  optionsPing: Type.Optional(optionsPing),
  hasPassword: Type.Boolean(),
  health: TrunkHealthSchema,
});
export type TrunkView = Static<typeof TrunkViewSchema>;

const ROUTE_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Default: the prefix.' }),
  prefix: Type.String({
    pattern: ROUTE_PREFIX_PATTERN,
    description: 'E.164 prefix including +, e.g. +1212. Longest match wins.',
  }),
  sipTrunkId: Type.String({ minLength: 1 }),
  priority: Type.Integer({ minimum: 0, description: 'Default 100.' }),
};
const RouteViewSchema = Type.Object({ ...OwnedDocumentFields, ...ROUTE_FIELDS });

const PHONE_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  sipTrunkId: Type.String({ minLength: 1 }),
};
const PhoneViewSchema = Type.Object({ ...OwnedDocumentFields, ...PHONE_FIELDS });

const TrunkQuerySchema = nullable(
  Type.Object(
    {
      name: Type.Optional(Type.String({ description: 'Part of the name, any case.' })),
      host: Type.Optional(Type.String()),
      isDefault: Type.Optional(Type.Boolean()),
      active: Type.Optional(Type.Boolean()),
      ...PagingFields,
    },
    { additionalProperties: false },
  ),
);

/** The OPTIONS monitor as the API sees it (calls/trunk-health.ts); absent when pings are off. */
export interface TrunkHealthSource {
  health(trunkId: string): TrunkHealthView;
  /** Picks up a trunk's changed optionsPing, address or state now rather than at the next refresh. */
  refresh(): void;
}

const NOT_CHECKED: TrunkHealthView = { status: 'unknown', checkedAt: null, lastError: null };

export function trunkView(t: SipTrunk, health?: TrunkHealthSource): TrunkView {
  const { password, tls, register, ...rest } = t;
  return {
    ...rest,
    ...(register ? { register: registerView(register) } : {}),
    identity: t.identity ?? DEFAULT_TRUNK_IDENTITY,
    media: t.media ?? 'rtp',
    tls: tlsView(tls),
    hasPassword: !!password,
    health: health?.health(t.id) ?? NOT_CHECKED,
  };
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

  registerDocumentRoutes(app, {
    path: '/api/v1/phones/sip-trunks',
    tag: TAG,
    access: ACCESS,
    noun: 'SIP trunk',
    repo: store.sipTrunks,
    clock,
    properties: TRUNK_FIELDS,
    required: ['name', 'host'],
    build: (b) => ({
      name: b.name,
      host: b.host,
      port: b.port ?? null,
      transport: b.transport ?? 'udp',
      username: b.username ?? null,
      password: b.password ?? null,
      defaultCallerId: b.defaultCallerId ?? null,
      callerIds: b.callerIds ?? [],
      numberFormat: b.numberFormat ?? 'e164',
      techPrefix: b.techPrefix ?? '',
      headers: b.headers ?? {},
      ratePerMinute: b.ratePerMinute ?? 0,
      isDefault: b.isDefault ?? false,
      active: b.active ?? true,
      maxChannels: b.maxChannels ?? null,
      optionsPing: b.optionsPing ?? false,
      identity: b.identity ?? DEFAULT_TRUNK_IDENTITY,
      tls: patchedTls(b.tls, undefined),
      media: b.media ?? 'rtp',
      ...(b.register ? { register: registrationOf(b.register, undefined) } : {}),
    }),
    // A PATCH's tls replaces the stored one, but without the key it keeps the
    // stored key (clients never see it).
    onPatch: (prev, next) => ({
      ...next,
      ...(next.tls !== prev.tls ? { tls: patchedTls(next.tls, prev.tls) } : {}),
      ...(next.register && next.register !== prev.register
        ? { register: registrationOf(next.register, prev.register) }
        : {}),
    }),
    check: (t) => checkTlsMaterial(t),
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
    response: TrunkViewSchema,
    view,
  });

  // Spec §4.3: where a sipTrunkId is obtained.
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/api/v1/phones/sip-trunks/query',
    {
      config: { access: ACCESS },
      schema: {
        tags: [TAG],
        summary: 'Query SIP trunks',
        security: [{ apiKey: [] }],
        body: TrunkQuerySchema,
        response: { 200: PageOf(TrunkViewSchema) },
      },
    },
    async (request) => {
      const q = request.body ?? {};
      const { page, pageSize, offset } = paging(q);
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
        items: all.slice(offset, offset + pageSize).map(view),
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
    properties: ROUTE_FIELDS,
    required: ['prefix', 'sipTrunkId'],
    build: (b) => ({
      name: b.name ?? b.prefix,
      prefix: b.prefix,
      sipTrunkId: b.sipTrunkId,
      priority: b.priority ?? 100,
    }),
    check: (r) => trunkExists(r.companyId, r.sipTrunkId),
    response: RouteViewSchema,
    view: (r) => r,
  });

  registerDocumentRoutes(app, {
    path: '/api/v1/phones/voip-phones',
    tag: TAG,
    access: ACCESS,
    noun: 'VoIP phone',
    repo: store.voipPhones,
    clock,
    properties: PHONE_FIELDS,
    required: ['name', 'sipTrunkId'],
    build: (b) => ({ name: b.name, sipTrunkId: b.sipTrunkId }),
    check: (p) => trunkExists(p.companyId, p.sipTrunkId),
    response: PhoneViewSchema,
    view: (p) => p,
  });
}
