// Call records on PostgreSQL (issue 27): the SQLite repository's contract,
// asynchronous. The indexed fields are columns, the rest of the record a
// jsonb document; every status change is appended to call_events. A change
// (the row, its event and the change hook) is one transaction: the
// repository's own on a pooled client, or the caller's when it is handed a
// client inside one (the outer commit decides). Text is ordered and compared
// with COLLATE "C", byte for byte as SQLite's BINARY collation does, so both
// stores page and range-filter alike whatever the database's locale.
import pg from 'pg';
import type {
  CallEvent,
  CallPatch,
  CallQuery,
  CallRecord,
  CallUpdateOptions,
} from '../../model/call-record.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';
import { COLUMNS, saveParams, toCallRecord, toParams, type CallRow } from './pg-call-row.js';
import { LIVE_STATUSES } from '../../model/call-status.js';

/**
 * Told of every change inside its transaction (the webhook outbox: issue 25),
 * with the Queryable that transaction runs on: what it writes through `db`
 * commits or rolls back with the change, and a rejection rolls the change back.
 */
export type PgCallChangeListener = (
  before: CallRecord | undefined,
  after: CallRecord,
  at: string,
  db: Queryable,
) => Promise<void>;

const INSERT = `WITH c AS (
    INSERT INTO calls (id, call_id, company_id, phone_number, agent_id, status, scheduled_at,
      created_at, modified_at, data, node_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11) RETURNING id, status, created_at)
  INSERT INTO call_events (call_id, seq, at, status, detail) SELECT id, 1, created_at, status, NULL FROM c`;
const SAVE = `UPDATE calls SET phone_number = $2, agent_id = $3, status = $4, scheduled_at = $5,
    modified_at = $6, data = $7::jsonb, node_id = coalesce($8, node_id) WHERE id = $1`;
/** SAVE and the status change's event in one statement (one round trip): $9 the detail. */
const SAVE_WITH_EVENT = `WITH saved AS (${SAVE} RETURNING id, status, modified_at)
  INSERT INTO call_events (call_id, seq, at, status, detail)
  SELECT id, (SELECT coalesce(max(seq), 0) + 1 FROM call_events WHERE call_id = saved.id),
    modified_at, status, $9 FROM saved`;
/**
 * An update in one statement (one round trip, where a transaction of its own
 * takes four, and one inside the caller's three): the row locked, the
 * conditions checked, the patch merged (a top-level key replaced, one patched
 * to undefined removed: the record's spread), the event of a status change
 * appended. It writes nothing when the company has an enabled webhook
 * endpoint, whose outbox needs the change in JavaScript (the caller falls
 * back to the transaction).
 *   $1 id, $2 onlyFrom, $3 owner required for a live record, $4 live statuses,
 *   $5/$6 phone number (set?, value), $7/$8 agent, $9 status, $10/$11
 *   scheduled at, $12 at, $13 keys removed, $14 keys set, $15 this node, $16 detail
 */
const UPDATE_ALONE = `WITH old AS (
    SELECT * FROM calls WHERE id = $1 FOR UPDATE
  ), allowed AS (
    SELECT old.* FROM old
    WHERE ($2::text[] IS NULL OR old.status = ANY($2::text[]))
      AND ($3::text IS NULL OR old.node_id IS NOT DISTINCT FROM $3 OR NOT old.status = ANY($4::text[]))
  ), quiet AS (
    SELECT allowed.* FROM allowed
    WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints w
                      WHERE w.company_id = allowed.company_id AND w.enabled)
  ), saved AS (
    UPDATE calls c SET
      phone_number = CASE WHEN $5 THEN $6 ELSE q.phone_number END,
      agent_id = CASE WHEN $7 THEN $8 ELSE q.agent_id END,
      status = coalesce($9, q.status),
      scheduled_at = CASE WHEN $10 THEN $11 ELSE q.scheduled_at END,
      modified_at = $12,
      data = (q.data - $13::text[]) || $14::jsonb,
      node_id = CASE WHEN $9 = 'trying' AND q.status <> 'trying' THEN coalesce($15, q.node_id)
                ELSE q.node_id END
    FROM quiet q WHERE c.id = q.id
    RETURNING c.*, q.status AS before_status
  ), event AS (
    INSERT INTO call_events (call_id, seq, at, status, detail)
    SELECT s.id, (SELECT coalesce(max(seq), 0) + 1 FROM call_events WHERE call_id = s.id),
      $12, s.status, $16
    FROM saved s WHERE s.status <> s.before_status
  )
  SELECT EXISTS (SELECT 1 FROM allowed) AS allowed, (SELECT row_to_json(saved) FROM saved) AS saved`;
const NEWEST_FIRST = 'ORDER BY created_at COLLATE "C" DESC, id COLLATE "C"';

/** The calls domain's CallRepository port in its asynchronous form (Async<CallRepository>). */
export class PgCallRepository {
  private readonly onChange: PgCallChangeListener;
  /** Whether an update may run as one statement (UPDATE_ALONE). */
  private readonly updatesAlone: boolean;

  /**
   * With `nodeId` (a daemon's store; docs/decisions/multi-node-store.md rule
   * 4), a record belongs to the node that inserted it or last moved it to
   * `trying` (the node that dials it), and findByStatus sees that node's
   * records only: recovery and the watchdog never touch a peer's calls.
   *
   * `opts.hookNeedsWebhooks`: the hook writes nothing for a company without
   * an enabled webhook endpoint (the outbox), so such a company's updates
   * may skip it. Without a hook they always may.
   */
  constructor(
    private readonly db: Queryable,
    onChange?: PgCallChangeListener,
    private readonly nodeId?: string,
    opts: { hookNeedsWebhooks?: boolean } = {},
  ) {
    this.onChange = onChange ?? (async () => undefined);
    this.updatesAlone = onChange === undefined || opts.hookNeedsWebhooks === true;
  }

  /** Stores a new record and its first event; rejects when its id or callId exists. */
  async insert(record: CallRecord): Promise<CallRecord> {
    await transaction(this.db, async (tx) => {
      await tx.query(INSERT, [...toParams(record), this.nodeId ?? null]);
      await this.onChange(undefined, record, record.createdAt, tx);
      return { value: undefined, durable: true };
    });
    return record;
  }

  async getById(id: string): Promise<CallRecord | undefined> {
    const { rows } = await this.db.query<CallRow>('SELECT * FROM calls WHERE id = $1', [id]);
    return rows[0] && toCallRecord(rows[0]);
  }

  /** A company's call by record id or callId (the record id first, if both match). */
  async get(companyId: string, idOrCallId: string): Promise<CallRecord | undefined> {
    const { rows } = await this.db.query<CallRow>(
      `SELECT * FROM calls WHERE company_id = $1 AND (id = $2 OR call_id = $2)
       ORDER BY id = $2 DESC LIMIT 1`,
      [companyId, idOrCallId],
    );
    return rows[0] && toCallRecord(rows[0]);
  }

  /**
   * Merges `patch` into the record. With `status` in the patch, the change is
   * also logged; with `onlyFrom`, the update happens only while the stored
   * status is one of those (returns undefined otherwise), which is how a
   * final status is never left. The row is locked (FOR UPDATE) from the read
   * to the commit, so a compare-and-set on another daemon waits and then
   * sees this one. A patch that changes the status commits durably; one that
   * does not commits with synchronous_commit off (the WAL is flushed a moment
   * later, as SQLite leaves its commits to the next group fsync), except
   * as one statement (UPDATE_ALONE) outside a transaction: that commits durably.
   */
  async patch(
    id: string,
    patch: CallPatch,
    at: string,
    opts: CallUpdateOptions = {},
  ): Promise<void> {
    await this.update(id, patch, at, opts);
  }

  async update(
    id: string,
    patch: CallPatch,
    at: string,
    opts: CallUpdateOptions = {},
  ): Promise<CallRecord | undefined> {
    if (this.updatesAlone) {
      const alone = await this.updateAlone(id, patch, at, opts);
      if (alone !== 'needs_outbox') return alone;
    }
    return transaction(this.db, async (tx) => {
      const { rows } = await tx.query<CallRow>('SELECT * FROM calls WHERE id = $1 FOR UPDATE', [
        id,
      ]);
      const current = rows[0] && toCallRecord(rows[0]);
      if (!current) return { value: undefined, durable: false };
      if (opts.onlyFrom && !opts.onlyFrom.includes(current.status))
        return { value: undefined, durable: false };
      // A live record is written by its owner only (rule 4): a node whose calls a peer adopted is fenced off.
      if (
        opts.ownedOnly &&
        this.nodeId !== undefined &&
        LIVE_STATUSES.includes(current.status) &&
        rows[0]!.node_id !== this.nodeId
      )
        return { value: undefined, durable: false };
      const next: CallRecord = { ...current, ...patch, id, modifiedAt: at } as CallRecord;
      const changesStatus = patch.status !== undefined && patch.status !== current.status;
      // The node that dials a record owns it from then on (a scheduled call may be dialed by a peer).
      const owner = changesStatus && patch.status === 'trying' ? (this.nodeId ?? null) : null;
      if (changesStatus)
        await tx.query(SAVE_WITH_EVENT, [...saveParams(next), owner, opts.detail ?? null]);
      else await tx.query(SAVE, [...saveParams(next), owner]);
      await this.onChange(current, next, at, tx);
      return { value: next, durable: changesStatus };
    });
  }

  /** update() in one statement (UPDATE_ALONE); 'needs_outbox' when the company has webhooks. */
  private async updateAlone(
    id: string,
    patch: CallPatch,
    at: string,
    opts: CallUpdateOptions,
  ): Promise<CallRecord | undefined | 'needs_outbox'> {
    const removed: string[] = [];
    const set: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(patch)) {
      if (COLUMNS.has(k)) continue;
      if (v === undefined) removed.push(k);
      else set[k] = v;
    }
    // As the record's spread: a nullable column named in the patch is set (undefined
    // stores null); the phone number, never null, only when given a value.
    const has = (k: keyof CallPatch): boolean => k in patch && patch[k] !== undefined;
    const { rows } = await this.db.query<{ allowed: boolean; saved: CallRow | null }>(
      UPDATE_ALONE,
      [
        id,
        opts.onlyFrom ?? null,
        opts.ownedOnly && this.nodeId !== undefined ? this.nodeId : null,
        LIVE_STATUSES,
        has('phoneNumber'),
        patch.phoneNumber ?? null,
        'agentId' in patch,
        patch.agentId ?? null,
        patch.status ?? null,
        'scheduledAt' in patch,
        patch.scheduledAt ?? null,
        at,
        removed,
        jsonb(set),
        this.nodeId ?? null,
        opts.detail ?? null,
      ],
    );
    const { allowed, saved } = rows[0]!;
    if (!allowed) return undefined;
    return saved ? toCallRecord(saved) : 'needs_outbox';
  }

  async events(id: string): Promise<CallEvent[]> {
    const { rows } = await this.db.query<CallEvent>(
      'SELECT seq, at, status, detail FROM call_events WHERE call_id = $1 ORDER BY seq',
      [id],
    );
    return rows;
  }

  /**
   * A page of a company's calls, newest first, and how many match. A
   * negative limit means no limit and a negative offset none, as in SQLite.
   */
  async query(companyId: string, q: CallQuery): Promise<{ items: CallRecord[]; total: number }> {
    const params: unknown[] = [companyId];
    const param = (v: unknown): string => `$${params.push(v)}`;
    const where = ['company_id = $1'];
    if (q.statuses && q.statuses.length > 0)
      where.push(`status = ANY(${param(q.statuses)}::text[])`);
    if (q.phoneNumber) where.push(`phone_number = ${param(q.phoneNumber)}`);
    if (q.agentId) where.push(`agent_id = ${param(q.agentId)}`);
    if (q.createdFrom) where.push(`created_at COLLATE "C" >= ${param(q.createdFrom)}`);
    if (q.createdTo) where.push(`created_at COLLATE "C" < ${param(q.createdTo)}`);
    const clause = where.join(' AND ');
    const counted = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM calls WHERE ${clause}`,
      params,
    );
    const limit = param(q.limit < 0 ? null : q.limit);
    const offset = param(Math.max(q.offset, 0));
    const { rows } = await this.db.query<CallRow>(
      `SELECT * FROM calls WHERE ${clause} ${NEWEST_FIRST} LIMIT ${limit} OFFSET ${offset}`,
      params,
    );
    return { items: rows.map(toCallRecord), total: counted.rows[0]?.n ?? 0 };
  }

  /** Calls of a company in any of `statuses` (live-call counting). */
  async countByStatus(companyId: string, statuses: readonly string[]): Promise<number> {
    return this.count('company_id = $1 AND status = ANY($2::text[])', [companyId, statuses]);
  }

  /** Calls on a trunk (any company) in any of `statuses`. */
  async countLiveOnTrunk(trunkId: string, statuses: readonly string[]): Promise<number> {
    return this.count(`data ->> 'sipTrunkId' = $1 AND status = ANY($2::text[])`, [
      trunkId,
      statuses,
    ]);
  }

  /** Transfer targets dialed by the gateway: `transferring` calls whose transfer goes `via: bridge`. */
  async countTransferLegs(companyId: string): Promise<number> {
    return this.count(
      `company_id = $1 AND status = 'transferring'
       AND data #>> '{transferringDetails,via}' = 'bridge'`,
      [companyId],
    );
  }

  /**
   * All calls (any company; this node's, given a node id) in any of
   * `statuses`: recovery after a restart.
   * Oldest first here; SQLite promises no order (it follows its index).
   */
  async findByStatus(statuses: readonly string[]): Promise<CallRecord[]> {
    const mine = this.nodeId === undefined ? '' : 'AND node_id = $2';
    const { rows } = await this.db.query<CallRow>(
      `SELECT * FROM calls WHERE status = ANY($1::text[]) ${mine}
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      this.nodeId === undefined ? [statuses] : [statuses, this.nodeId],
    );
    return rows.map(toCallRecord);
  }

  private async count(where: string, params: unknown[]): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM calls WHERE ${where}`,
      params,
    );
    return rows[0]?.n ?? 0;
  }
}

/**
 * Runs `fn` as one transaction. Given the pool, on a client of its own:
 * BEGIN, `fn`, COMMIT (with synchronous_commit off when `fn` says the change
 * need not be durable yet), ROLLBACK when it throws. Given a client, the
 * caller's transaction is running: `fn` runs on it and the caller commits.
 */
async function transaction<T>(
  db: Queryable,
  fn: (tx: Queryable) => Promise<{ value: T; durable: boolean }>,
): Promise<T> {
  if (!(db instanceof pg.Pool)) return (await fn(db)).value;
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const { value, durable } = await fn(client);
    await client.query(durable ? 'COMMIT' : 'SET LOCAL synchronous_commit = off; COMMIT');
    return value;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}
