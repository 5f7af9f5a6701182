// The durable schedule on PostgreSQL (issue 27 item 3): the SQLite
// repository's contract, asynchronous. Several daemons claim due rows at
// once: `FOR UPDATE SKIP LOCKED` hands each row to one of them, under a
// lease with the daemon's node id; a row marked `dispatched` (its INVITE
// may have left) is never claimed again (DESIGN "Reliability rules").
import type pg from 'pg';
import {
  ScheduleKeyTakenError,
  type NewSchedule,
  type ScheduleKind,
  type ScheduleRow,
  type ScheduleState,
} from '../../model/schedule.js';

interface Row {
  id: string;
  call_record_id: string;
  company_id: string;
  due_at: string;
  kind: ScheduleKind;
  attempt: number;
  state: ScheduleState;
  lease_owner: string | null;
  lease_until: string | null;
  claims: number;
  idempotency_key: string;
  outcome: string | null;
  created_at: string;
  modified_at: string;
}

/** Anything that runs a query: the pool, or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** The calls domain's ScheduleRepository port in its asynchronous form (Async<ScheduleRepository>). */
export class PgScheduleRepository {
  constructor(private readonly db: Queryable) {}

  /** Inserts a pending row; undefined when the idempotency key already exists. */
  async insert(s: NewSchedule, at: string): Promise<ScheduleRow | undefined> {
    const { rows } = await this.db.query<Row>(
      `INSERT INTO schedules
         (call_record_id, company_id, due_at, kind, attempt, state, idempotency_key, created_at, modified_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $7)
       ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
      [s.callRecordId, s.companyId, s.dueAt, s.kind, s.attempt, s.idempotencyKey, at],
    );
    return rows[0] && toSchedule(rows[0]);
  }

  async add(s: NewSchedule, at: string): Promise<void> {
    if (!(await this.insert(s, at))) throw new ScheduleKeyTakenError(s.idempotencyKey);
  }

  async get(id: number): Promise<ScheduleRow | undefined> {
    const { rows } = await this.db.query<Row>('SELECT * FROM schedules WHERE id = $1', [id]);
    return rows[0] && toSchedule(rows[0]);
  }

  /** Rows of a record still to be dialed or being dialed. */
  async openForCall(callRecordId: string): Promise<ScheduleRow[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM schedules WHERE call_record_id = $1
         AND state IN ('pending', 'claimed', 'dispatched') ORDER BY id`,
      [callRecordId],
    );
    return rows.map(toSchedule);
  }

  async forCall(callRecordId: string): Promise<ScheduleRow[]> {
    const { rows } = await this.db.query<Row>(
      'SELECT * FROM schedules WHERE call_record_id = $1 ORDER BY id',
      [callRecordId],
    );
    return rows.map(toSchedule);
  }

  /**
   * Claims up to `limit` rows that are due, or whose claim lease expired
   * before reaching `dispatched`. Rows another daemon is claiming at the
   * same moment are skipped, not waited for (SKIP LOCKED).
   */
  async claimDue(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
    at: string,
  ): Promise<ScheduleRow[]> {
    const { rows } = await this.db.query<Row>(
      `UPDATE schedules
         SET state = 'claimed', lease_owner = $1, lease_until = $2, claims = claims + 1, modified_at = $3
       WHERE id IN (
         SELECT id FROM schedules
         WHERE (state = 'pending' AND due_at <= $4) OR (state = 'claimed' AND lease_until < $4)
         ORDER BY due_at, id LIMIT $5
         FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [owner, now + leaseMs, at, now, limit],
    );
    return rows.map(toSchedule).sort((a, b) => a.dueAt - b.dueAt || a.id - b.id);
  }

  /** claimed → dispatched, only while `owner` still holds an unexpired lease. */
  async markDispatched(id: number, owner: string, now: number, at: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE schedules SET state = 'dispatched', modified_at = $4
       WHERE id = $1 AND state = 'claimed' AND lease_owner = $2 AND lease_until >= $3`,
      [id, owner, now, at],
    );
    return r.rowCount === 1;
  }

  async finish(
    id: number,
    state: 'done' | 'cancelled',
    outcome: string,
    at: string,
  ): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE schedules SET state = $2, outcome = $3, lease_owner = NULL, lease_until = NULL,
         modified_at = $4 WHERE id = $1 AND state NOT IN ('done', 'cancelled')`,
      [id, state, outcome, at],
    );
    return r.rowCount === 1;
  }

  /** claimed → pending at a new due time (a re-check moved the call). */
  async release(
    id: number,
    owner: string,
    dueAt: number,
    outcome: string,
    at: string,
  ): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE schedules SET state = 'pending', due_at = $3, lease_owner = NULL, lease_until = NULL,
         outcome = $4, modified_at = $5 WHERE id = $1 AND state = 'claimed' AND lease_owner = $2`,
      [id, owner, dueAt, outcome, at],
    );
    return r.rowCount === 1;
  }

  /** Rows left `dispatched` since before `before` (ISO): crash recovery. */
  async staleDispatched(before: string): Promise<ScheduleRow[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM schedules WHERE state = 'dispatched' AND modified_at < $1 ORDER BY id`,
      [before],
    );
    return rows.map(toSchedule);
  }

  /** dispatched → pending: only when the record proves no INVITE was sent. */
  async rearm(id: number, dueAt: number, outcome: string, at: string): Promise<boolean> {
    const r = await this.db.query(
      `UPDATE schedules SET state = 'pending', due_at = $2, lease_owner = NULL, lease_until = NULL,
         outcome = $3, modified_at = $4 WHERE id = $1 AND state = 'dispatched'`,
      [id, dueAt, outcome, at],
    );
    return r.rowCount === 1;
  }

  /** Drops the record's rows not yet dispatched (hangup of a scheduled call). */
  async cancelForCall(callRecordId: string, outcome: string, at: string): Promise<number> {
    const r = await this.db.query(
      `UPDATE schedules SET state = 'cancelled', outcome = $2, lease_owner = NULL, lease_until = NULL,
         modified_at = $3 WHERE call_record_id = $1 AND state IN ('pending', 'claimed')`,
      [callRecordId, outcome, at],
    );
    return r.rowCount ?? 0;
  }

  /** Earliest due time of a pending row (Unix ms), if any. */
  async nextDueAt(): Promise<number | undefined> {
    const { rows } = await this.db.query<{ due: string | null }>(
      `SELECT min(due_at) AS due FROM schedules WHERE state = 'pending'`,
    );
    return rows[0]?.due == null ? undefined : Number(rows[0].due);
  }
}

/** int8 columns arrive as text (node-postgres keeps 64-bit exact); ours fit a double. */
function toSchedule(row: Row): ScheduleRow {
  return {
    id: Number(row.id),
    callRecordId: row.call_record_id,
    companyId: row.company_id,
    dueAt: Number(row.due_at),
    kind: row.kind,
    attempt: row.attempt,
    state: row.state,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until === null ? null : Number(row.lease_until),
    claims: row.claims,
    idempotencyKey: row.idempotency_key,
    outcome: row.outcome,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}
