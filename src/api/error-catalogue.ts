// The one catalogue of error codes the API answers with. Each code has one
// HTTP status and a line of description; the OpenAPI document lists them.
import { INITIATE_CALL_FIELDS } from '../calls/initiate-call-request.js';
import { GatewayError } from '../errors.js';

export interface CatalogueEntry {
  status: number;
  description: string;
}

/** Request fields whose validation failure is `invalid_<snake_case field>`. */
export const VALIDATED_FIELDS = INITIATE_CALL_FIELDS;

export function fieldErrorCode(field: string): string {
  return `invalid_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/^_/, '')}`;
}

const base: Record<string, CatalogueEntry> = {
  // 400: malformed or invalid requests
  invalid_json: { status: 400, description: 'The body is not valid JSON.' },
  invalid_body: {
    status: 400,
    description:
      'The body is not a JSON object, fails the route schema, or holds a forbidden key (__proto__, constructor.prototype).',
  },
  invalid_request: {
    status: 400,
    description:
      'The HTTP request itself is malformed (request line, headers, Host, percent-encoding in the path).',
  },
  unknown_field: { status: 400, description: 'The body has a field the contract does not define.' },
  from_number_not_allowed: {
    status: 400,
    description: '`fromNumber` is not part of the contract; use `callerId`.',
  },
  agent_not_found: { status: 400, description: 'Invalid or inaccessible agent id.' },
  voip_phone_not_found: { status: 400, description: 'Bad VoIP phone id.' },
  sip_trunk_not_found: {
    status: 400,
    description:
      'Trunk not found or inactive, or no SIP trunk or VoIP phone specified and none resolvable.',
  },
  sip_trunk_offline: {
    status: 400,
    description:
      "Of the sip_trunk_not_found family: the chosen trunk asked for OPTIONS pings and stopped answering them; the reason says why (the trunk's `health.lastError`).",
  },
  caller_id_not_allowed: {
    status: 400,
    description: 'The caller ID is not one the trunk may present.',
  },
  distributor_not_found: { status: 400, description: 'Configuration issue.' },
  call_already_scheduled: { status: 400, description: 'Schedule conflict.' },
  failed_to_schedule_call: { status: 400, description: 'Schedule conflict.' },
  contact_not_found: { status: 400, description: 'Contact not found.' },
  call_not_live: {
    status: 409,
    description: 'The call has already ended (or, for a transfer, is not connected: in_call).',
  },
  invalid_transfer_destination: {
    status: 400,
    description:
      'A transfer destination that is not an E.164 number (destinationType number) or a SIP URI (sip_uri).',
  },
  invalid_transfer_mode: {
    status: 400,
    description: '`blindTransfer` (deprecated) contradicts `transferMode`.',
  },
  transfer_in_progress: {
    status: 409,
    description: 'A transfer of this call is already in progress; one at a time.',
  },
  invalid_tls_material: {
    status: 400,
    description:
      "A trunk's TLS CA bundle, client certificate or key that does not load (not PEM, key not matching the certificate), or a client certificate without its key.",
  },
  invalid_webhook_url: {
    status: 400,
    description:
      'A webhook URL that is not https (or http where allowed), carries credentials, or points at a loopback, private, link-local or metadata address.',
  },
  no_consult_in_progress: {
    status: 409,
    description:
      'No warm or attended transfer of this call is in a phase that allows merge, cancel or swap.',
  },
  // 401, 403
  unauthorized: {
    status: 401,
    description: 'Missing, unknown, revoked or IP-restricted API key (one body for all).',
  },
  operation_not_allowed: {
    status: 403,
    description: "The key's operation groups do not include this operation.",
  },
  company_access_denied: {
    status: 403,
    description: '`x-company-id` names a company the key may not act for.',
  },
  outbound_calls_not_allowed: {
    status: 403,
    description: "The company's plan does not include outbound calls.",
  },
  callee_opted_out: {
    status: 403,
    description: 'The callee asked never to be called again (or not before `blockedUntil`).',
  },
  // 402
  insufficient_credits: { status: 402, description: 'No credits or minutes in plan.' },
  no_seconds_available: { status: 402, description: 'No seconds remaining in plan.' },
  no_channels_available: { status: 402, description: 'Channel limit of plan reached.' },
  no_concurrent_calls_available: { status: 402, description: 'All concurrent call slots in use.' },
  no_available_channels: { status: 402, description: "The trunk's channels are all in use." },
  // 404, 409, 413, 415, 429
  not_found: { status: 404, description: 'No such route, or no such object in this company.' },
  method_not_allowed: {
    status: 405,
    description: 'The path exists but not with this method; the Allow header lists the methods.',
  },
  request_timeout: {
    status: 408,
    description: 'The request did not arrive in full within the server timeout.',
  },
  conflict: { status: 409, description: 'The object conflicts with an existing one.' },
  call_already_in_progress: {
    status: 409,
    description:
      'A call to the number is live or scheduled, or the same number and agent were called within 60 s.',
  },
  body_too_large: { status: 413, description: 'The body exceeds the configured limit.' },
  uri_too_long: { status: 414, description: 'A path parameter is longer than the server accepts.' },
  unsupported_media_type: { status: 415, description: 'The body is not application/json.' },
  rate_limit_exceeded: {
    status: 429,
    description: 'Too many requests for this API key; see Retry-After.',
  },
  daily_call_limit_reached: {
    status: 429,
    description: 'Anti-harassment: 3 answered calls per number per UTC day.',
  },
  weekly_call_limit_reached: {
    status: 429,
    description: 'Anti-harassment: 5 answered calls per number per rolling week.',
  },
  failed_call_limit_reached: {
    status: 429,
    description: 'Anti-harassment: 3 failed attempts per number per UTC day.',
  },
  cooldown_period_active: {
    status: 429,
    description: 'Anti-harassment: 1 hour between answered calls to the same number.',
  },
  header_fields_too_large: {
    status: 431,
    description: 'The request line and headers together exceed the server limit (16 KB).',
  },
  // 5xx
  internal_error: {
    status: 500,
    description: 'Unexpected server error; retry or contact support.',
  },
  server_unavailable: {
    status: 503,
    description:
      'Calls server unavailable (starting, shutting down, or its database not answering); retry after the Retry-After header. 503, not the 500 of spec §7: see docs/api.md.',
  },
};

for (const field of VALIDATED_FIELDS) {
  base[fieldErrorCode(field)] = {
    status: 400,
    description: `\`${field}\` is missing or fails its rule.`,
  };
}

export const ERROR_CATALOGUE: Readonly<Record<string, CatalogueEntry>> = base;

/** An error the API answers with `{ error, reason }` (or the refusal shape when `details` is set). */
export class ApiError extends GatewayError {
  constructor(code: string, reason: string, details?: Record<string, unknown>) {
    const entry = ERROR_CATALOGUE[code];
    if (!entry) throw new Error(`error code ${code} is not in the catalogue`);
    super(code, reason, entry.status, details);
  }
}
