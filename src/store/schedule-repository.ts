// Durable schedule of call dials (DESIGN "Reliability rules"): a row is
// claimed under a lease in one statement, marked `dispatched` before the
// dial starts, and never handed out again once dispatched.
import {
  ScheduleKeyTakenError,
  type NewSchedule,
  type ScheduleKind,
  type ScheduleRow,
  type ScheduleState,
} from '../model/schedule.js';
import type { Db } from './database.js';

export { SCHEDULE_KINDS, SCHEDULE_STATES } from '../model/schedule.js';
export type { NewSchedule, ScheduleKind, ScheduleRow, ScheduleState } from '../model/schedule.js';

interface Row {
  id: number;
  call_record_id: string;
  company_id: string;
  due_at: number;
  kind: ScheduleKind;
  attempt: number;
  state: ScheduleState;
  lease_owner: string | null;
  lease_until: number | null;
  claims: number;
  idempotency_key: string;
  outcome: string | null;
  created_at: string;
  modified_at: string;
}

export class SqliteScheduleRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(`INSERT INTO schedules
        (call_record_id, company_id, due_at, kind, attempt, state, idempotency_key, created_at, modified_at)
        VALUES (@callRecordId, @companyId, @dueAt, @kind, @attempt, 'pending', @idempotencyKey, @at, @at)
        ON CONFLICT(idempotency_key) DO NOTHING RETURNING *`),
      byId: db.prepare('SELECT * FROM schedules WHERE id = ?'),
      openForCall: db.prepare(
        `SELECT * FROM schedules WHERE call_record_id = ? AND state IN ('pending', 'claimed', 'dispatched') ORDER BY id`,
      ),
      forCall: db.prepare('SELECT * FROM schedules WHERE call_record_id = ? ORDER BY id'),
      // One statement: SQLite holds the write lock for it, so two daemons on
      // one file never claim the same row.
      claim: db.prepare(`UPDATE schedules
        SET state = 'claimed', lease_owner = @owner, lease_until = @leaseUntil, claims = claims + 1, modified_at = @at
        WHERE id IN (
          SELECT id FROM schedules
          WHERE (state = 'pending' AND due_at <= @now) OR (state = 'claimed' AND lease_until < @now)
          ORDER BY due_at, id LIMIT @limit)
        RETURNING *`),
      dispatch: db.prepare(`UPDATE schedules SET state = 'dispatched', modified_at = @at
        WHERE id = @id AND state = 'claimed' AND lease_owner = @owner AND lease_until >= @now`),
      finish:
        db.prepare(`UPDATE schedules SET state = @state, outcome = @outcome, lease_owner = NULL,
        lease_until = NULL, modified_at = @at WHERE id = @id AND state NOT IN ('done', 'cancelled')`),
      release:
        db.prepare(`UPDATE schedules SET state = 'pending', due_at = @dueAt, lease_owner = NULL,
        lease_until = NULL, outcome = @outcome, modified_at = @at
        WHERE id = @id AND state = 'claimed' AND lease_owner = @owner`),
      staleDispatched: db.prepare(
        `SELECT * FROM schedules WHERE state = 'dispatched' AND modified_at < @before ORDER BY id`,
      ),
      rearm:
        db.prepare(`UPDATE schedules SET state = 'pending', due_at = @dueAt, lease_owner = NULL,
        lease_until = NULL, outcome = @outcome, modified_at = @at WHERE id = @id AND state = 'dispatched'`),
      cancelForCall:
        db.prepare(`UPDATE schedules SET state = 'cancelled', outcome = @outcome, lease_owner = NULL,
        lease_until = NULL, modified_at = @at
        WHERE call_record_id = @callRecordId AND state IN ('pending', 'claimed')`),
      nextDue: db.prepare(`SELECT min(due_at) AS due FROM schedules WHERE state = 'pending'`),
    };
  }

  /** Inserts a pending row; undefined when the idempotency key already exists. */
  insert(s: NewSchedule, at: string): ScheduleRow | undefined {
    const row = this.stmts.insert.get({ ...s, at }) as Row | undefined;
    return row && toSchedule(row);
  }

  add(s: NewSchedule, at: string): void {
    if (!this.insert(s, at)) throw new ScheduleKeyTakenError(s.idempotencyKey);
  }

  get(id: number): ScheduleRow | undefined {
    const row = this.stmts.byId.get(id) as Row | undefined;
    return row && toSchedule(row);
  }

  /** Rows of a record still to be dialed or being dialed. */
  openForCall(callRecordId: string): ScheduleRow[] {
    return (this.stmts.openForCall.all(callRecordId) as Row[]).map(toSchedule);
  }

  forCall(callRecordId: string): ScheduleRow[] {
    return (this.stmts.forCall.all(callRecordId) as Row[]).map(toSchedule);
  }

  /**
   * Claims up to `limit` rows that are due, or whose claim lease expired
   * before reaching `dispatched` (a daemon died between claim and dial).
   */
  claimDue(owner: string, now: number, leaseMs: number, limit: number, at: string): ScheduleRow[] {
    const rows = this.stmts.claim.all({
      owner,
      now,
      leaseUntil: now + leaseMs,
      limit,
      at,
    }) as Row[];
    return rows.map(toSchedule).sort((a, b) => a.dueAt - b.dueAt || a.id - b.id);
  }

  /**
   * claimed → dispatched, only while `owner` still holds an unexpired lease.
   * False: the lease was lost and another daemon may own the row now.
   */
  markDispatched(id: number, owner: string, now: number, at: string): boolean {
    return this.stmts.dispatch.run({ id, owner, now, at }).changes === 1;
  }

  finish(id: number, state: 'done' | 'cancelled', outcome: string, at: string): boolean {
    return this.stmts.finish.run({ id, state, outcome, at }).changes === 1;
  }

  /** claimed → pending at a new due time (a re-check moved the call). */
  release(id: number, owner: string, dueAt: number, outcome: string, at: string): boolean {
    return this.stmts.release.run({ id, owner, dueAt, outcome, at }).changes === 1;
  }

  /** Rows left `dispatched` since before `before` (ISO): crash recovery. */
  staleDispatched(before: string): ScheduleRow[] {
    return (this.stmts.staleDispatched.all({ before }) as Row[]).map(toSchedule);
  }

  /** dispatched → pending: only when the record proves no INVITE was sent. */
  rearm(id: number, dueAt: number, outcome: string, at: string): boolean {
    return this.stmts.rearm.run({ id, dueAt, outcome, at }).changes === 1;
  }

  /** Drops the record's rows not yet dispatched (hangup of a scheduled call). */
  cancelForCall(callRecordId: string, outcome: string, at: string): number {
    return this.stmts.cancelForCall.run({ callRecordId, outcome, at }).changes;
  }

  /** Earliest due time of a pending row (Unix ms), if any. */
  nextDueAt(): number | undefined {
    const row = this.stmts.nextDue.get() as { due: number | null };
    return row.due ?? undefined;
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}

function toSchedule(row: Row): ScheduleRow {
  return {
    id: row.id,
    callRecordId: row.call_record_id,
    companyId: row.company_id,
    dueAt: row.due_at,
    kind: row.kind,
    attempt: row.attempt,
    state: row.state,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    claims: row.claims,
    idempotencyKey: row.idempotency_key,
    outcome: row.outcome,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}
