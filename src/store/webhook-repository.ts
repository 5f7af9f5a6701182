// Webhook endpoints and the outbox (issue 25). `recordCallChange` runs inside
// the transaction of the call record's change (call-repository.ts), so an
// event and its deliveries exist exactly when the change was committed. The
// delivery worker (webhooks/delivery-worker.ts) is the one writer of a
// delivery's progress; the API reads deliveries and may ask for a retry.
import { randomUUID } from 'node:crypto';
import type { CallRecord } from '../model/call-record.js';
import {
  type DeliveryStatus,
  type DueDelivery,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventBody,
  type WebhookEventType,
} from '../model/webhook.js';
import { callEventsOf } from '../model/webhook-events.js';
import type { Db } from './database.js';

interface EndpointRow {
  id: string;
  company_id: string;
  url: string;
  event_types: string;
  enabled: number;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  modified_at: string;
}

interface DeliveryRow {
  id: number;
  endpoint_id: string;
  event_id: string;
  type: WebhookEventType;
  record_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  last_response_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  body: string;
}

export type EndpointPatch = Partial<
  Pick<WebhookEndpoint, 'url' | 'eventTypes' | 'enabled' | 'description'>
>;

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, e.type, d.record_id, d.status, d.attempts,
  d.next_attempt_at, d.last_response_code, d.last_error, d.created_at, d.delivered_at, e.body`;

export class SqliteWebhookRepository {
  private readonly stmts;
  /** Told (inside the transaction: defer the work) when deliveries were written. */
  onWritten: (() => void) | undefined;

  constructor(private readonly db: Db) {
    this.stmts = {
      insertEndpoint: db.prepare(`INSERT INTO webhook_endpoints (id, company_id, url, event_types,
        enabled, description, secret, created_at, modified_at)
        VALUES (@id, @companyId, @url, @eventTypes, @enabled, @description, @secret, @at, @at)`),
      endpoint: db.prepare('SELECT * FROM webhook_endpoints WHERE company_id = ? AND id = ?'),
      endpointById: db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?'),
      endpoints: db.prepare(
        'SELECT * FROM webhook_endpoints WHERE company_id = ? ORDER BY created_at, id',
      ),
      enabledEndpoints: db.prepare(
        'SELECT id, event_types FROM webhook_endpoints WHERE company_id = ? AND enabled = 1',
      ),
      saveEndpoint: db.prepare(`UPDATE webhook_endpoints SET url = @url, event_types = @eventTypes,
        enabled = @enabled, description = @description, modified_at = @at WHERE id = @id`),
      rotate: db.prepare(`UPDATE webhook_endpoints SET previous_secret = secret, secret = @secret,
        previous_secret_expires_at = @expiresAt, modified_at = @at WHERE id = @id`),
      removeEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      insertEvent:
        db.prepare(`INSERT INTO webhook_events (id, company_id, record_id, type, body, created_at)
        VALUES (?, ?, ?, ?, ?, ?)`),
      insertDelivery: db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_id, record_id,
        status, attempts, next_attempt_at, created_at) VALUES (?, ?, ?, 'pending', 0, ?, ?)`),
      // Due, its endpoint enabled, and no earlier delivery of the same call to the
      // same endpoint still pending: a call's events arrive in order.
      due: db.prepare(`SELECT ${DELIVERY_COLUMNS}, w.url, w.secret, w.previous_secret,
          w.previous_secret_expires_at
        FROM webhook_deliveries d
        JOIN webhook_events e ON e.id = d.event_id
        JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled = 1
        WHERE d.status = 'pending' AND d.next_attempt_at <= @now
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
            WHERE p.endpoint_id = d.endpoint_id AND p.record_id IS d.record_id
              AND p.status = 'pending' AND p.id < d.id)
        ORDER BY d.next_attempt_at, d.id LIMIT @limit`),
      delivered:
        db.prepare(`UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1,
        last_response_code = ?, last_error = NULL, next_attempt_at = NULL, delivered_at = ?
        WHERE id = ? AND status = 'pending'`),
      retryLater: db.prepare(`UPDATE webhook_deliveries SET attempts = attempts + 1,
        last_response_code = ?, last_error = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending'`),
      failed: db.prepare(`UPDATE webhook_deliveries SET status = 'failed', attempts = attempts + 1,
        last_response_code = ?, last_error = ?, next_attempt_at = NULL WHERE id = ? AND status = 'pending'`),
      deliveries: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
        JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ? ORDER BY d.id DESC LIMIT ?`),
      delivery: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
        JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ? AND d.id = ?`),
      again: db.prepare(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?,
        delivered_at = NULL WHERE id = ?`),
      pending:
        db.prepare(`SELECT count(*) AS n, min(e.created_at) AS oldest FROM webhook_deliveries d
        JOIN webhook_events e ON e.id = d.event_id WHERE d.status = 'pending'`),
      pruneDeliveries: db.prepare(
        `DELETE FROM webhook_deliveries WHERE status != 'pending' AND created_at < ?`,
      ),
      pruneEvents: db.prepare(`DELETE FROM webhook_events WHERE created_at < ?
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`),
    };
  }

  // ---- endpoints (the API)

  insertEndpoint(e: WebhookEndpoint, secret: string): WebhookEndpoint {
    this.stmts.insertEndpoint.run({
      id: e.id,
      companyId: e.companyId,
      url: e.url,
      eventTypes: JSON.stringify(e.eventTypes),
      enabled: e.enabled ? 1 : 0,
      description: e.description,
      secret,
      at: e.createdAt,
    });
    return e;
  }

  getEndpoint(companyId: string, id: string): WebhookEndpoint | undefined {
    const row = this.stmts.endpoint.get(companyId, id) as EndpointRow | undefined;
    return row && toEndpoint(row);
  }

  listEndpoints(companyId: string): WebhookEndpoint[] {
    return (this.stmts.endpoints.all(companyId) as EndpointRow[]).map(toEndpoint);
  }

  updateEndpoint(id: string, patch: EndpointPatch, at: string): WebhookEndpoint | undefined {
    const row = this.stmts.endpointById.get(id) as EndpointRow | undefined;
    if (!row) return undefined;
    const next = { ...toEndpoint(row), ...patch, modifiedAt: at };
    this.stmts.saveEndpoint.run({
      id,
      url: next.url,
      eventTypes: JSON.stringify(next.eventTypes),
      enabled: next.enabled ? 1 : 0,
      description: next.description,
      at,
    });
    return next;
  }

  /** The new secret signs from now; the old one too until `previousExpiresAt`. */
  rotateSecret(id: string, secret: string, previousExpiresAt: string, at: string): void {
    this.stmts.rotate.run({ id, secret, expiresAt: previousExpiresAt, at });
  }

  /** The endpoint and its deliveries (pending ones included) are gone. */
  removeEndpoint(id: string): void {
    this.stmts.removeEndpoint.run(id);
  }

  // ---- the outbox (inside the call record's transaction)

  /**
   * Writes the events a call record's change reports, one delivery per
   * enabled endpoint of its company that subscribes to the type. Called by
   * the call repository inside the transaction of the change.
   */
  recordCallChange(before: CallRecord | undefined, after: CallRecord, at: string): number {
    const drafts = callEventsOf(before, after);
    if (drafts.length === 0) return 0;
    const endpoints = this.stmts.enabledEndpoints.all(after.companyId) as Array<{
      id: string;
      event_types: string;
    }>;
    if (endpoints.length === 0) return 0;
    const subscribed = endpoints.map((e) => ({
      id: e.id,
      types: new Set(JSON.parse(e.event_types) as string[]),
    }));
    const nowMs = Date.parse(at);
    let written = 0;
    for (const draft of drafts) {
      const to = subscribed.filter((e) => e.types.size === 0 || e.types.has(draft.type));
      if (to.length === 0) continue;
      const body: WebhookEventBody = {
        id: `evt_${randomUUID().replaceAll('-', '')}`,
        type: draft.type,
        timestamp: at,
        companyId: after.companyId,
        callId: after.callId,
        data: draft.data,
      };
      this.stmts.insertEvent.run(
        body.id,
        after.companyId,
        after.id,
        draft.type,
        JSON.stringify(body),
        at,
      );
      for (const e of to) {
        this.stmts.insertDelivery.run(e.id, body.id, after.id, nowMs, at);
        written++;
      }
    }
    if (written > 0) this.onWritten?.();
    return written;
  }

  // ---- the delivery worker

  /** Deliveries due at `nowMs`, oldest first, at most one per (endpoint, call). */
  due(nowMs: number, limit: number): DueDelivery[] {
    const rows = this.stmts.due.all({ now: nowMs, limit }) as Array<
      DeliveryRow & {
        url: string;
        secret: string;
        previous_secret: string | null;
        previous_secret_expires_at: string | null;
      }
    >;
    return rows.map((r) => ({
      id: String(r.id),
      endpointId: r.endpoint_id,
      url: r.url,
      eventId: r.event_id,
      body: r.body,
      attempts: r.attempts,
      createdAt: r.created_at,
      secrets: {
        current: r.secret,
        previous: r.previous_secret,
        previousExpiresAt: r.previous_secret_expires_at,
      },
    }));
  }

  // A delivery's outcome survives kill -9 once committed (the WAL write reached
  // the OS); one lost to a power cut before the next group fsync is sent
  // again, which at-least-once allows.

  markDelivered(id: string, responseCode: number, at: string): void {
    this.stmts.delivered.run(responseCode, at, Number(id));
  }

  markRetry(id: string, responseCode: number, error: string | null, nextAttemptMs: number): void {
    this.stmts.retryLater.run(responseCode, error, nextAttemptMs, Number(id));
  }

  markFailed(id: string, responseCode: number, error: string | null): void {
    this.stmts.failed.run(responseCode, error, Number(id));
  }

  /** Pending deliveries and the age of the oldest one's event (for /metrics). */
  backlog(nowMs: number): { pending: number; oldestAgeSeconds: number } {
    const r = this.stmts.pending.get() as { n: number; oldest: string | null };
    return {
      pending: r.n,
      oldestAgeSeconds: r.oldest ? Math.max(0, (nowMs - Date.parse(r.oldest)) / 1000) : 0,
    };
  }

  /** Finished deliveries, and events no delivery needs, written before `beforeIso`. */
  prune(beforeIso: string): { deliveries: number; events: number } {
    return this.db.transaction(() => ({
      deliveries: this.stmts.pruneDeliveries.run(beforeIso).changes,
      events: this.stmts.pruneEvents.run(beforeIso).changes,
    }))();
  }

  // ---- deliveries (the API)

  deliveries(endpointId: string, limit: number): WebhookDelivery[] {
    return (this.stmts.deliveries.all(endpointId, limit) as DeliveryRow[]).map(toDelivery);
  }

  delivery(endpointId: string, id: string): WebhookDelivery | undefined {
    if (!/^[0-9]{1,15}$/.test(id)) return undefined;
    const row = this.stmts.delivery.get(endpointId, Number(id)) as DeliveryRow | undefined;
    return row && toDelivery(row);
  }

  /** Sends it again from now (whatever its status: a manual retry). */
  retryNow(id: string, nowMs: number): void {
    this.stmts.again.run(nowMs, Number(id));
  }
}

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    companyId: r.company_id,
    url: r.url,
    eventTypes: JSON.parse(r.event_types) as WebhookEventType[],
    enabled: r.enabled === 1,
    description: r.description,
    createdAt: r.created_at,
    modifiedAt: r.modified_at,
  };
}

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: String(r.id),
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.type,
    callId: (JSON.parse(r.body) as WebhookEventBody).callId,
    status: r.status,
    attempts: r.attempts,
    lastResponseCode: r.last_response_code,
    lastError: r.last_error,
    nextAttemptAt:
      r.status === 'pending' && r.next_attempt_at !== null
        ? new Date(r.next_attempt_at).toISOString()
        : null,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
  };
}
