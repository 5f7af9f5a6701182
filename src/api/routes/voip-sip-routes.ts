// [VoIP & SIP]: SIP trunks (and the spec's trunk query), outbound routes,
// legacy VoIP phones.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { Clock } from '../../clock.js';
import type { TrunkHealthView } from '../../calls/trunk-resolution.js';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import {
  DEFAULT_TRUNK_IDENTITY,
  DEFAULT_TRUNK_TLS,
  type SipTrunk,
  type TrunkRegistration,
} from '../../model/entities.js';
import {
  E164_PATTERN,
  ROUTE_PREFIX_PATTERN,
  SIP_HEADER_NAME_PATTERN,
  SIP_HOST_PATTERN,
  SIP_TEXT_PATTERN,
  TECH_PREFIX_PATTERN,
} from '../../model/sip-values.js';
import type { Store } from '../../store/store.js';
import { registerDocumentRoutes } from '../document-routes.js';
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
const PEM_BLOCKS = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PEM_CERTIFICATE = '^\\s*-----BEGIN CERTIFICATE-----';
const PEM_PRIVATE_KEY = '^\\s*-----BEGIN [A-Z ]*PRIVATE KEY-----';
/** Text that goes into a SIP message: no CR, LF, NUL or other control (model/sip-values.ts). */
const SIP_TEXT = (maxLength = 200) => Type.String({ maxLength, pattern: SIP_TEXT_PATTERN });
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
  tls: Type.Object(
    {
      caPem: Type.Optional(
        nullable(
          Type.String({
            maxLength: 65_536,
            pattern: PEM_CERTIFICATE,
            description:
              "PEM CA bundle the trunk's certificate must chain to; null (default): the system's CAs.",
          }),
        ),
      ),
      clientCertPem: Type.Optional(
        nullable(
          Type.String({
            maxLength: 65_536,
            pattern: PEM_CERTIFICATE,
            description: 'Client certificate (chain), PEM, for carriers that require mutual TLS.',
          }),
        ),
      ),
      clientKeyPem: Type.Optional(
        nullable(
          Type.String({
            maxLength: 65_536,
            pattern: PEM_PRIVATE_KEY,
            description:
              "The client certificate's private key, PEM (unencrypted). Never shown back; omitted in a PATCH, the stored key is kept.",
          }),
        ),
      ),
      sipsUri: Type.Optional(
        Type.Boolean({
          description:
            'Address the trunk with sips: URIs instead of sip:…;transport=tls (default false).',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        "TLS settings for transport tls: the trunk's certificate is always verified (chain and name: SNI = host).",
    },
  ),
  media: stringEnum(
    ['rtp', 'srtp', 'srtp-optional'],
    "The call's audio: rtp (default) plain RTP/AVP; srtp: RTP/SAVP with SDES keys (RFC 4568, AES_CM_128_HMAC_SHA1_80 or _32), the call ends sdp_error when the answer has no usable key; srtp-optional: RTP/AVP offered with keys, SRTP when the answer carries one, else plain RTP. Use srtp with transport tls: SDES keys travel in the SDP.",
  ),
  register: Type.Object(
    {
      enabled: Type.Optional(
        Type.Boolean({ description: 'REGISTER with the registrar (default false).' }),
      ),
      username: Type.String({
        pattern: '^[A-Za-z0-9+._~!$&=-]{1,64}$',
        description: "The address-of-record's user (sip:username@registrar) and our Contact's.",
      }),
      authUsername: Type.Optional(nullable(SIP_TEXT(128))),
      password: Type.Optional(nullable(SIP_TEXT(128))),
      expiresSeconds: Type.Optional(
        Type.Integer({
          minimum: 10,
          maximum: 86_400,
          description:
            'Expiry asked for (default 3600); refreshed before what the registrar grants.',
        }),
      ),
      registrar: Type.Optional(
        nullable(
          Type.String({
            maxLength: 260,
            pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$',
            description: "host[:port] of the registrar; null (default): the trunk's host and port.",
          }),
        ),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Registration (RFC 3261 §10): REGISTERed on start and when the trunk is saved, refreshed, un-REGISTERed on shutdown. While it fails, calls through the trunk are refused (sip_trunk_offline). Needs the embedded SIP engine.',
    },
  ),
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

const { clientKeyPem: _clientKeyPem, ...SHOWN_TLS_FIELDS } = TRUNK_FIELDS.tls.properties;
const { password: _registerPassword, ...SHOWN_REGISTER_FIELDS } = TRUNK_FIELDS.register.properties;

/** A trunk as the API shows it: never the password or the TLS key, whether there is one; its health. */
export const TrunkViewSchema = Type.Object({
  ...OwnedDocumentFields,
  ...SHOWN_TRUNK_FIELDS,
  tls: Type.Object({ ...SHOWN_TLS_FIELDS, hasClientKey: Type.Boolean() }),
  register: Type.Optional(Type.Object({ ...SHOWN_REGISTER_FIELDS, hasPassword: Type.Boolean() })),
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
  const { clientKeyPem, ...shownTls } = tls ?? DEFAULT_TRUNK_TLS;
  return {
    ...rest,
    ...(register ? { register: registerView(register) } : {}),
    identity: t.identity ?? DEFAULT_TRUNK_IDENTITY,
    media: t.media ?? 'rtp',
    tls: { ...shownTls, hasClientKey: clientKeyPem !== null },
    hasPassword: !!password,
    health: health?.health(t.id) ?? NOT_CHECKED,
  };
}

function registerView(r: TrunkRegistration) {
  const { password, ...shown } = r;
  return { ...shown, hasPassword: password !== null && password !== '' };
}

/** A registration as sent (any field may be left out), with defaults; a
 *  password left out keeps the stored one. 400 without a username. */
function registrationOf(
  sent: Partial<TrunkRegistration>,
  prev: TrunkRegistration | undefined,
): TrunkRegistration {
  const username = sent.username ?? prev?.username;
  if (!username)
    throw new ApiError('invalid_body', 'register.username is required to register a trunk.');
  return {
    enabled: sent.enabled ?? prev?.enabled ?? false,
    username,
    authUsername:
      sent.authUsername !== undefined ? sent.authUsername : (prev?.authUsername ?? null),
    password: sent.password !== undefined ? sent.password : (prev?.password ?? null),
    expiresSeconds: sent.expiresSeconds ?? prev?.expiresSeconds ?? 3600,
    registrar: sent.registrar !== undefined ? sent.registrar : (prev?.registrar ?? null),
  };
}

/** A trunk's TLS material must load as Node will use it: 400 invalid_tls_material if not. */
function checkTlsMaterial(t: SipTrunk): void {
  const tls = t.tls;
  if (!tls) return;
  if ((tls.clientCertPem === null) !== (tls.clientKeyPem === null))
    throw new ApiError(
      'invalid_tls_material',
      'tls.clientCertPem and tls.clientKeyPem go together.',
    );
  try {
    // Node skips a CA block it cannot parse: each certificate is parsed here.
    for (const pem of [tls.caPem, tls.clientCertPem]) {
      const blocks = pem?.match(PEM_BLOCKS) ?? [];
      if (pem !== null && blocks.length === 0) throw new Error('no certificate');
      for (const block of blocks) new X509Certificate(block);
    }
    if (tls.clientCertPem !== null && tls.clientKeyPem !== null) {
      const leaf = new X509Certificate(tls.clientCertPem.match(PEM_BLOCKS)![0]!);
      if (!leaf.checkPrivateKey(createPrivateKey(tls.clientKeyPem)))
        throw new Error('key does not match');
    }
    createSecureContext({
      ca: tls.caPem ?? undefined,
      cert: tls.clientCertPem ?? undefined,
      key: tls.clientKeyPem ?? undefined,
    });
  } catch {
    throw new ApiError(
      'invalid_tls_material',
      'The TLS CA bundle, client certificate or key does not load (or the key does not match).',
    );
  }
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
      tls: { ...DEFAULT_TRUNK_TLS, ...b.tls },
      media: b.media ?? 'rtp',
      ...(b.register ? { register: registrationOf(b.register, undefined) } : {}),
    }),
    // A PATCH's tls replaces the stored one, but without the key it keeps the
    // stored key (clients never see it).
    onPatch: (prev, next) => ({
      ...next,
      ...(next.tls !== prev.tls
        ? {
            tls: {
              ...DEFAULT_TRUNK_TLS,
              clientKeyPem: prev.tls?.clientKeyPem ?? null,
              ...next.tls,
            },
          }
        : {}),
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
