// Webhook endpoints and the outbox on PostgreSQL (issue 27): the SQLite
// repository's contract (webhook-repository.ts), asynchronous.
// `recordCallChange` runs on the transaction client of the call record's
// change, so an event and its deliveries exist exactly when it commits.
//
// Several daemons deliver from one outbox. `due` claims what it hands out:
// the rows are taken with `FOR UPDATE SKIP LOCKED` (a row another daemon is
// claiming is skipped, not waited for) and their `next_attempt_at` is moved
// to the end of a lease, so no other daemon sees them due until the lease
// runs out (the claimer died mid-send: at least once allows the resend). The
// claimed row stays `pending`, so a call's next delivery to the same
// endpoint keeps waiting for it, on every daemon. The worker's outcome
// (delivered, retry, failed) replaces the lease.
import { randomUUID } from 'node:crypto';
import type { CallRecord } from '../../model/call-record.js';
import type {
  DeliveryStatus,
  DueDelivery,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventBody,
  WebhookEventType,
} from '../../model/webhook.js';
import { callEventsOf } from '../../model/webhook-events.js';
import type { EndpointPatch } from '../webhook-repository.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';

/**
 * How long a claimed delivery is not handed out again. Longer than one send
 * can take: connect, headers and body each wait up to webhooks.timeoutMs.
 */
export const DEFAULT_CLAIM_LEASE_MS = 120_000;

interface EndpointRow {
  id: string;
  company_id: string;
  url: string;
  /** jsonb: parsed by node-postgres. */
  event_types: WebhookEventType[];
  enabled: boolean;
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  modified_at: string;
}

/** int8 columns (id, next_attempt_at) arrive as text; jsonb (body) parsed. */
interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  type: WebhookEventType;
  record_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_response_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
  body: WebhookEventBody;
}

interface DueRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  created_at: string;
  body: WebhookEventBody;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, e.type, d.record_id, d.status, d.attempts,
  d.next_attempt_at, d.last_response_code, d.last_error, d.created_at, d.delivered_at, e.body`;

/** A delivery id as the API and the worker carry it: digits, or no such delivery. */
const DELIVERY_ID = /^[0-9]{1,15}$/;

/** SQLite reads a negative LIMIT as no limit; PostgreSQL's no limit is NULL. */
const limitOf = (n: number): number | null => (n < 0 ? null : n);

export class PgWebhookRepository {
  /** Told (inside the transaction: defer the work) when deliveries were written. */
  onWritten: (() => void) | undefined;
  private readonly claimLeaseMs: number;

  constructor(
    private readonly db: Queryable,
    opts: { claimLeaseMs?: number } = {},
  ) {
    this.claimLeaseMs = opts.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  }

  // ---- endpoints (the API)

  async insertEndpoint(e: WebhookEndpoint, secret: string): Promise<WebhookEndpoint> {
    await this.db.query(
      `INSERT INTO webhook_endpoints (id, company_id, url, event_types, enabled, description, secret,
         created_at, modified_at) VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $8)`,
      [
        e.id,
        e.companyId,
        e.url,
        jsonb(e.eventTypes),
        e.enabled,
        e.description,
        secret,
        e.createdAt,
      ],
    );
    return e;
  }

  async getEndpoint(companyId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.db.query<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE company_id = $1 AND id = $2',
      [companyId, id],
    );
    return rows[0] && toEndpoint(rows[0]);
  }

  async listEndpoints(companyId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query<EndpointRow>(
      `SELECT * FROM webhook_endpoints WHERE company_id = $1
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [companyId],
    );
    return rows.map(toEndpoint);
  }

  async updateEndpoint(
    id: string,
    patch: EndpointPatch,
    at: string,
  ): Promise<WebhookEndpoint | undefined> {
    const { rows } = await this.db.query<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE id = $1',
      [id],
    );
    if (!rows[0]) return undefined;
    const next = { ...toEndpoint(rows[0]), ...patch, modifiedAt: at };
    await this.db.query(
      `UPDATE webhook_endpoints SET url = $2, event_types = $3::jsonb, enabled = $4,
         description = $5, modified_at = $6 WHERE id = $1`,
      [id, next.url, jsonb(next.eventTypes), next.enabled, next.description, at],
    );
    return next;
  }

  /** The new secret signs from now; the old one too until `previousExpiresAt`. */
  async rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: string,
    at: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE webhook_endpoints SET previous_secret = secret, secret = $2,
         previous_secret_expires_at = $3, modified_at = $4 WHERE id = $1`,
      [id, secret, previousExpiresAt, at],
    );
  }

  /** The endpoint and its deliveries (pending ones included) are gone. */
  async removeEndpoint(id: string): Promise<void> {
    await this.db.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
  }

  // ---- the outbox (inside the call record's transaction)

  /**
   * Writes the events a call record's change reports, one delivery per
   * enabled endpoint of its company that subscribes to the type. Called with
   * the transaction client of the change.
   */
  async recordCallChange(
    before: CallRecord | undefined,
    after: CallRecord,
    at: string,
  ): Promise<number> {
    // Most changes report no event (a transcript, costs, an attempt): no read then.
    const drafts = callEventsOf(before, after);
    if (drafts.length === 0) return 0;
    // Oldest endpoint first: the order SQLite's rowids give its deliveries.
    const { rows: endpoints } = await this.db.query<{ id: string; event_types: string[] }>(
      `SELECT id, event_types FROM webhook_endpoints WHERE company_id = $1 AND enabled
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [after.companyId],
    );
    if (endpoints.length === 0) return 0;
    const subscribed = endpoints.map((e) => ({ id: e.id, types: new Set(e.event_types) }));
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
      // The event and its deliveries in one statement (the foreign key is
      // checked at its end), delivery ids in endpoint order.
      await this.db.query(
        `WITH event AS (
           INSERT INTO webhook_events (id, company_id, record_id, type, body, created_at)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6))
         INSERT INTO webhook_deliveries (endpoint_id, event_id, record_id, status, attempts,
           next_attempt_at, created_at)
         SELECT t.endpoint_id, $1, $3, 'pending', 0, $7, $6
         FROM unnest($8::text[]) WITH ORDINALITY AS t(endpoint_id, n) ORDER BY t.n`,
        [
          body.id,
          after.companyId,
          after.id,
          draft.type,
          jsonb(body),
          at,
          nowMs,
          to.map((e) => e.id),
        ],
      );
      written += to.length;
    }
    if (written > 0) this.onWritten?.();
    return written;
  }

  // ---- the delivery worker

  /**
   * Claims the deliveries due at `nowMs`, oldest first, at most one per
   * (endpoint, call), each to this caller only: until the claim lease runs
   * out no daemon (this one included) is handed it again.
   */
  async due(nowMs: number, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.db.query<DueRow>(
      `WITH picked AS (
         SELECT d.id, d.next_attempt_at AS was_due
         FROM webhook_deliveries d
         JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled
         WHERE d.status = 'pending' AND d.next_attempt_at <= $1
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p
             WHERE p.endpoint_id = d.endpoint_id AND p.record_id IS NOT DISTINCT FROM d.record_id
               AND p.status = 'pending' AND p.id < d.id)
         ORDER BY d.next_attempt_at, d.id LIMIT $2
         FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries u SET next_attempt_at = $3 FROM picked WHERE u.id = picked.id
         RETURNING u.id, u.endpoint_id, u.event_id, u.attempts, u.created_at, picked.was_due
       )
       SELECT c.id, c.endpoint_id, c.event_id, c.attempts, c.created_at, e.body,
         w.url, w.secret, w.previous_secret, w.previous_secret_expires_at
       FROM claimed c
       JOIN webhook_events e ON e.id = c.event_id
       JOIN webhook_endpoints w ON w.id = c.endpoint_id
       ORDER BY c.was_due, c.id`,
      [nowMs, limitOf(limit), nowMs + this.claimLeaseMs],
    );
    return rows.map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      url: r.url,
      eventId: r.event_id,
      body: JSON.stringify(r.body),
      attempts: r.attempts,
      createdAt: r.created_at,
      secrets: {
        current: r.secret,
        previous: r.previous_secret,
        previousExpiresAt: r.previous_secret_expires_at,
      },
    }));
  }

  async markDelivered(id: string, responseCode: number, at: string): Promise<void> {
    if (!DELIVERY_ID.test(id)) return;
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1,
         last_response_code = $2, last_error = NULL, next_attempt_at = NULL, delivered_at = $3
       WHERE id = $1 AND status = 'pending'`,
      [id, responseCode, at],
    );
  }

  async markRetry(
    id: string,
    responseCode: number,
    error: string | null,
    nextAttemptMs: number,
  ): Promise<void> {
    if (!DELIVERY_ID.test(id)) return;
    await this.db.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_response_code = $2,
         last_error = $3, next_attempt_at = $4 WHERE id = $1 AND status = 'pending'`,
      [id, responseCode, error, nextAttemptMs],
    );
  }

  async markFailed(id: string, responseCode: number, error: string | null): Promise<void> {
    if (!DELIVERY_ID.test(id)) return;
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'failed', attempts = attempts + 1,
         last_response_code = $2, last_error = $3, next_attempt_at = NULL
       WHERE id = $1 AND status = 'pending'`,
      [id, responseCode, error],
    );
  }

  /** Pending deliveries and the age of the oldest one's event (for /metrics). */
  async backlog(nowMs: number): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const { rows } = await this.db.query<{ n: string; oldest: string | null }>(
      `SELECT count(*) AS n, min(e.created_at COLLATE "C") AS oldest FROM webhook_deliveries d
       JOIN webhook_events e ON e.id = d.event_id WHERE d.status = 'pending'`,
    );
    const r = rows[0]!;
    return {
      pending: Number(r.n),
      oldestAgeSeconds: r.oldest ? Math.max(0, (nowMs - Date.parse(r.oldest)) / 1000) : 0,
    };
  }

  /**
   * Finished deliveries, and events no delivery needs, written before
   * `beforeIso`. Two statements, the second reading what the first left (a
   * manual retry committed in between keeps its event); on a transaction
   * client they share its transaction.
   */
  async prune(beforeIso: string): Promise<{ deliveries: number; events: number }> {
    const deliveries = await this.db.query(
      `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1 COLLATE "C"`,
      [beforeIso],
    );
    const events = await this.db.query(
      `DELETE FROM webhook_events WHERE created_at < $1 COLLATE "C"
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`,
      [beforeIso],
    );
    return { deliveries: deliveries.rowCount ?? 0, events: events.rowCount ?? 0 };
  }

  // ---- deliveries (the API)

  async deliveries(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
       JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = $1
       ORDER BY d.id DESC LIMIT $2`,
      [endpointId, limitOf(limit)],
    );
    return rows.map(toDelivery);
  }

  async delivery(endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    if (!DELIVERY_ID.test(id)) return undefined;
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
       JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = $1 AND d.id = $2`,
      [endpointId, id],
    );
    return rows[0] && toDelivery(rows[0]);
  }

  /** Sends it again from now (whatever its status: a manual retry). */
  async retryNow(id: string, nowMs: number): Promise<void> {
    if (!DELIVERY_ID.test(id)) return;
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2,
         delivered_at = NULL WHERE id = $1`,
      [id, nowMs],
    );
  }
}

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    companyId: r.company_id,
    url: r.url,
    eventTypes: r.event_types,
    enabled: r.enabled,
    description: r.description,
    createdAt: r.created_at,
    modifiedAt: r.modified_at,
  };
}

function toDelivery(r: DeliveryRow): WebhookDelivery {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    eventType: r.type,
    callId: r.body.callId,
    status: r.status,
    attempts: r.attempts,
    lastResponseCode: r.last_response_code,
    lastError: r.last_error,
    nextAttemptAt:
      r.status === 'pending' && r.next_attempt_at !== null
        ? new Date(Number(r.next_attempt_at)).toISOString()
        : null,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
  };
}
