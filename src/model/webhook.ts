// Webhooks (issue 25): the customer's endpoints, the events the gateway
// pushes to them, and the deliveries of those events (the outbox).

/** The event types an endpoint may subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'call.accepted',
  'call.scheduled',
  'call.ringing',
  'call.answered',
  'call.transfer',
  'call.ended',
  'call.retry_scheduled',
  'call.recording_ready',
  'call.analysis_completed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEndpoint {
  id: string;
  companyId: string;
  /** https (http only when webhooks.allowHttp). */
  url: string;
  /** The types it receives; empty: every type. */
  eventTypes: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  createdAt: string;
  modifiedAt: string;
}

/** An endpoint's signing secrets: the current one and, during a rotation's overlap, the previous. */
export interface WebhookSecrets {
  current: string;
  previous: string | null;
  /** ISO instant the previous secret stops signing. */
  previousExpiresAt: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: WebhookEventType;
  callId: string | null;
  status: DeliveryStatus;
  attempts: number;
  /** The receiver's last HTTP status (0: no response: network error, timeout, refused destination). */
  lastResponseCode: number | null;
  lastError: string | null;
  /** ISO instant of the next attempt (pending only). */
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** A delivery the worker may send now, with what it needs to send it. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  url: string;
  eventId: string;
  /** The event's JSON body, as stored (signed byte for byte). */
  body: string;
  attempts: number;
  /** When the event was written (the retry window counts from it). */
  createdAt: string;
  secrets: WebhookSecrets;
}

/** The body an endpoint receives (Standard Webhooks: type, timestamp, data). */
export interface WebhookEventBody {
  /** Unique; the `webhook-id` header too: the receiver's idempotency key. */
  id: string;
  type: WebhookEventType;
  /** ISO 8601, when the change it reports was written. */
  timestamp: string;
  companyId: string;
  /** The call's `callId` (as `initiate-call` answered it). */
  callId: string;
  data: Record<string, unknown>;
}
