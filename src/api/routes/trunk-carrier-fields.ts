// The fields of a trunk that real carriers need (issue 26): its TLS material
// (verified as Node will use it; the client key never shown back) and its
// registration (the password never shown back; a PATCH keeps what it omits).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { Type } from 'typebox';
import {
  DEFAULT_TRUNK_TLS,
  type SipTrunk,
  type TrunkRegistration,
  type TrunkTls,
} from '../../model/entities.js';
import { SIP_TEXT_PATTERN } from '../../model/sip-values.js';
import { ApiError } from '../error-catalogue.js';
import { nullable } from '../schemas/shared.js';

/** Text that goes into a SIP message: no CR, LF, NUL or other control (model/sip-values.ts). */
export const SIP_TEXT = (maxLength = 200) => Type.String({ maxLength, pattern: SIP_TEXT_PATTERN });

const PEM_BLOCKS = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const PEM_CERTIFICATE = '^\\s*-----BEGIN CERTIFICATE-----';
const PEM_PRIVATE_KEY = '^\\s*-----BEGIN [A-Z ]*PRIVATE KEY-----';

/** `tls` as a client may send it. */
export const TRUNK_TLS_FIELD = Type.Object(
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
);

/** `register` as a client may send it. */
export const TRUNK_REGISTER_FIELD = Type.Object(
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
        description: 'Expiry asked for (default 3600); refreshed before what the registrar grants.',
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
);

const { clientKeyPem: _clientKeyPem, ...SHOWN_TLS_FIELDS } = TRUNK_TLS_FIELD.properties;
const { password: _password, ...SHOWN_REGISTER_FIELDS } = TRUNK_REGISTER_FIELD.properties;

/** `tls` as the API shows it: whether there is a client key, never the key. */
export const TRUNK_TLS_VIEW = Type.Object({ ...SHOWN_TLS_FIELDS, hasClientKey: Type.Boolean() });

/** `register` as the API shows it: whether there is a password, never the password. */
export const TRUNK_REGISTER_VIEW = Type.Object({
  ...SHOWN_REGISTER_FIELDS,
  hasPassword: Type.Boolean(),
});

export function tlsView(tls: TrunkTls | undefined) {
  const { clientKeyPem, ...shown } = tls ?? DEFAULT_TRUNK_TLS;
  return { ...shown, hasClientKey: clientKeyPem !== null };
}

export function registerView(r: TrunkRegistration) {
  const { password, ...shown } = r;
  return { ...shown, hasPassword: password !== null && password !== '' };
}

/** A trunk's tls as created or PATCHed: defaults for what is left out; a
 *  PATCH's tls replaces the stored one but keeps the stored key when it
 *  names none (clients never see it). */
export function patchedTls(
  sent: Partial<TrunkTls> | undefined,
  prev: TrunkTls | undefined,
): TrunkTls {
  return { ...DEFAULT_TRUNK_TLS, clientKeyPem: prev?.clientKeyPem ?? null, ...sent };
}

/** A registration as sent (any field may be left out), with defaults; a
 *  password left out keeps the stored one. 400 without a username. */
export function registrationOf(
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
export function checkTlsMaterial(t: SipTrunk): void {
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
