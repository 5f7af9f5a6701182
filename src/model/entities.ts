// The stored objects, as the rest of the program sees them. Timestamps are
// ISO 8601 strings in UTC.

export interface CallingWindow {
  /** Local "HH:mm", inclusive. */
  start: string;
  /** Local "HH:mm" (or "24:00"), exclusive. */
  end: string;
}

/** One entry of `CompanySettings.callingRules` (docs/decisions/protections.md; all optional). */
export interface CallingRulesSetting {
  window?: CallingWindow;
  /** ISO weekdays, 1 = Monday … 7 = Sunday. */
  weekendDays?: number[];
  blockWeekends?: boolean;
  blockHolidays?: boolean;
  /** Local dates "YYYY-MM-DD" on which no call is placed. */
  extraBlockedDates?: string[];
  /** Zone deciding when the number's zones share no calling hour. */
  defaultZone?: string;
}

export interface CompanySettings {
  /** Default of useAntiHarassmentProtection for this company (DESIGN: on). */
  antiHarassmentDefault?: boolean;
  /** Numbers that bypass the anti-harassment rule (spec §8: test numbers). */
  testNumbers?: string[];
  /** Time and day rules: `default` and per country (ISO 3166-1 alpha-2), the country's entry winning key by key. */
  callingRules?: Record<string, CallingRulesSetting>;
}

export interface Company {
  id: string;
  name: string;
  parentId: string | null;
  settings: CompanySettings;
  createdAt: string;
}

export interface Plan {
  companyId: string;
  allowOutbound: boolean;
  /** null = unlimited. */
  credits: number | null;
  secondsRemaining: number | null;
  maxChannels: number | null;
  maxConcurrentCalls: number | null;
  modifiedAt: string;
}

export const OPERATION_GROUPS = [
  'Calls',
  'Agents',
  'Workflows',
  'VoIP & SIP',
  'SMS',
  'MCP',
  'Billing',
  'Shopify',
  'Campaigns',
] as const;
export type OperationGroup = (typeof OPERATION_GROUPS)[number];

export interface ApiKey {
  id: string;
  companyId: string;
  name: string;
  keyHash: Buffer;
  masked: string;
  fullAccess: boolean;
  groups: OperationGroup[];
  allowedIp: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Fields every company-owned document has. */
export interface OwnedDocument {
  id: string;
  companyId: string;
  createdAt: string;
  modifiedAt: string;
}

export type SipTransport = 'udp' | 'tcp' | 'tls';

export interface SipTrunk extends OwnedDocument {
  name: string;
  host: string;
  /** null: resolve by DNS SRV (RFC 3263), else 5060. */
  port: number | null;
  transport: SipTransport;
  username: string | null;
  password: string | null;
  defaultCallerId: string | null;
  /** Numbers this trunk may present as caller ID. */
  callerIds: string[];
  /** How the destination is written in the Request-URI. */
  numberFormat: 'e164' | 'e164_without_plus';
  techPrefix: string;
  /** Extra headers on every INVITE (X-…). */
  headers: Record<string, string>;
  ratePerMinute: number;
  isDefault: boolean;
  active: boolean;
  /** Simultaneous calls the trunk carries; null = no limit. */
  maxChannels: number | null;
  /** Ping the trunk with OPTIONS (interval: sip.optionsPingSeconds); off unless asked. Absent on trunks stored before it existed. */
  optionsPing?: boolean;
  /** How the caller is presented to the carrier (issue 26 item 4). Absent on trunks stored before it existed: the defaults. */
  identity?: TrunkIdentity;
  /** TLS settings (transport `tls`, issue 26 item 1); absent: the system's CAs, no client certificate, sip: URIs. */
  tls?: TrunkTls;
  /** Registration with the carrier's registrar (issue 26 item 3); absent or disabled: none. */
  register?: TrunkRegistration;
  /** How the call's audio is protected (issue 26 item 2): plain RTP, SRTP required, or SRTP when the far end takes it. Absent: rtp. */
  media?: 'rtp' | 'srtp' | 'srtp-optional';
}

/** A trunk that must REGISTER (RFC 3261 §10) before it may send INVITEs. */
export interface TrunkRegistration {
  enabled: boolean;
  /** The address-of-record's user (and our Contact's). */
  username: string;
  /** Digest user when it differs from username; null: username. */
  authUsername: string | null;
  /** Digest password; a secret, never shown back. */
  password: string | null;
  /** Expiry asked for; the registrar may grant less and we refresh before it. */
  expiresSeconds: number;
  /** host[:port] of the registrar when it is not the trunk's host; null: the trunk's host, port and transport. */
  registrar: string | null;
}

export const DEFAULT_TRUNK_TLS: TrunkTls = {
  caPem: null,
  clientCertPem: null,
  clientKeyPem: null,
  sipsUri: false,
};

/** How a TLS trunk is verified and how we present ourselves to it. */
export interface TrunkTls {
  /** PEM CA bundle the trunk's certificate must chain to; null: the system's CAs. */
  caPem: string | null;
  /** Client certificate (chain) and its private key, PEM, for carriers that require mutual TLS. The key is a secret: never shown back. */
  clientCertPem: string | null;
  clientKeyPem: string | null;
  /** Address the trunk with sips: URIs (RFC 3261 §19.1) instead of sip:…;transport=tls. */
  sipsUri: boolean;
}

/** A trunk's presentation of the caller: what the From user is, and which identity headers go with it. */
export interface TrunkIdentity {
  /** The From URI's user: the call's caller ID, the trunk's username, or `fixedFromUser`. */
  fromUser: 'caller_id' | 'username' | 'fixed';
  fixedFromUser: string | null;
  /** From's display name; null: none. */
  displayName: string | null;
  /** RFC 3325: P-Asserted-Identity, P-Preferred-Identity, both, or neither, carrying the caller ID. */
  assertedIdentity: 'pai' | 'ppi' | 'both' | 'none';
  /** RFC 5806 Diversion with the caller ID (carriers that want it for a number they did not assign). */
  diversion: boolean;
}

/** What a trunk without `identity` does (the behaviour before it existed). */
export const DEFAULT_TRUNK_IDENTITY: TrunkIdentity = {
  fromUser: 'caller_id',
  fixedFromUser: null,
  displayName: null,
  assertedIdentity: 'pai',
  diversion: false,
};

export interface VoipPhone extends OwnedDocument {
  name: string;
  sipTrunkId: string;
}

export interface OutboundRoute extends OwnedDocument {
  name: string;
  /** E.164 prefix including '+', e.g. "+1212". Longest match wins. */
  prefix: string;
  sipTrunkId: string;
  priority: number;
}

export type AgentAudioFormat = 'mulaw_8000' | 'pcm_8000' | 'pcm_16000' | 'pcm_24000';

export interface AgentOutgoingSettings {
  ringTimeoutSeconds: number | null;
  maxDurationSeconds: number | null;
  recordingEnabled: boolean;
  voicemailDetection: boolean;
}

export interface Agent extends OwnedDocument {
  name: string;
  websocketUrl: string;
  audioFormat: AgentAudioFormat;
  prompt: string;
  welcomeMessage: string;
  language: string | null;
  version: number;
  outgoing: AgentOutgoingSettings;
}

export interface OptOut {
  companyId: string;
  phoneNumber: string;
  permanent: boolean;
  blockedUntil: string | null;
  reason: string | null;
  source: string | null;
  createdAt: string;
}
