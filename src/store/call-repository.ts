// Call records. The indexed fields are columns; the rest of the record (the
// spec §2.5 shape) is a JSON document. Every status change is also appended
// to call_events with its timestamp.
import type {
  CallEvent,
  CallPatch,
  CallQuery,
  CallRecord,
  CallUpdateOptions,
} from '../model/call-record.js';
import { callDocument, callRecordOf, type CallColumns } from './call-columns.js';
import type { Db } from './database.js';

interface Row extends CallColumns {
  data: string;
}

/** Told of every change inside its transaction (the webhook outbox: issue 25). */
export type CallChangeListener = (
  before: CallRecord | undefined,
  after: CallRecord,
  at: string,
) => void;

export class SqliteCallRepository {
  private readonly stmts;

  constructor(
    private readonly db: Db,
    private readonly onChange: CallChangeListener = () => undefined,
  ) {
    this.stmts = {
      insert:
        db.prepare(`INSERT INTO calls (id, call_id, company_id, phone_number, agent_id, status, scheduled_at, created_at, modified_at, data)
        VALUES (@id, @callId, @companyId, @phoneNumber, @agentId, @status, @scheduledAt, @createdAt, @modifiedAt, @data)`),
      byId: db.prepare('SELECT * FROM calls WHERE id = ?'),
      byIdOrCallId: db.prepare(
        'SELECT * FROM calls WHERE company_id = ? AND (id = ? OR call_id = ?)',
      ),
      save: db.prepare(`UPDATE calls SET phone_number = @phoneNumber, agent_id = @agentId, status = @status,
        scheduled_at = @scheduledAt, modified_at = @modifiedAt, data = @data WHERE id = @id`),
      // save, only while the row is as the writer last stored it (its status and modifiedAt)
      saveIfUnchanged:
        db.prepare(`UPDATE calls SET phone_number = @phoneNumber, agent_id = @agentId, status = @status,
        scheduled_at = @scheduledAt, modified_at = @modifiedAt, data = @data
        WHERE id = @id AND status = @expectedStatus AND modified_at = @expectedModifiedAt`),
      addEvent: db.prepare(`INSERT INTO call_events (call_id, seq, at, status, detail)
        VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM call_events WHERE call_id = ?), ?, ?, ?)`),
      events: db.prepare(
        'SELECT seq, at, status, detail FROM call_events WHERE call_id = ? ORDER BY seq',
      ),
    };
  }

  insert(record: CallRecord): CallRecord {
    this.db.transaction(() => {
      this.stmts.insert.run(toParams(record));
      this.stmts.addEvent.run(record.id, record.id, record.createdAt, record.status, null);
      this.onChange(undefined, record, record.createdAt);
    })();
    return record;
  }

  getById(id: string): CallRecord | undefined {
    const row = this.stmts.byId.get(id) as Row | undefined;
    return row && toRecord(row);
  }

  /** A company's call by record id or callId. */
  get(companyId: string, idOrCallId: string): CallRecord | undefined {
    const row = this.stmts.byIdOrCallId.get(companyId, idOrCallId, idOrCallId) as Row | undefined;
    return row && toRecord(row);
  }

  /**
   * Merges `patch` into the record. With `status` in the patch, the change is
   * also logged; with `onlyFrom`, the update happens only while the stored
   * status is one of those (returns undefined otherwise), which is how a
   * final status is never left. Power-safe with the store's next group
   * fsync (`unitOfWork.durable`), which what acknowledges it waits for.
   */
  patch(id: string, patch: CallPatch, at: string, opts: CallUpdateOptions = {}): void {
    this.update(id, patch, at, opts);
  }

  update(
    id: string,
    patch: CallPatch,
    at: string,
    // ownedOnly: one daemon owns every record of its file
    opts: CallUpdateOptions = {},
  ): CallRecord | undefined {
    const apply = (): CallRecord | undefined => {
      const known = opts.current;
      // The writer's own copy: no read back (the JSON parse is most of an update's cost) while the row is unchanged.
      if (known && known.id === id && (!opts.onlyFrom || opts.onlyFrom.includes(known.status))) {
        const next = merged(known, patch, id, at);
        const saved = this.stmts.saveIfUnchanged.run({
          ...toParams(next),
          expectedStatus: known.status,
          expectedModifiedAt: known.modifiedAt,
        });
        if (saved.changes === 1) return this.saved(known, next, patch, at, opts.detail);
      }
      const current = this.getById(id);
      if (!current) return undefined;
      if (opts.onlyFrom && !opts.onlyFrom.includes(current.status)) return undefined;
      const next = merged(current, patch, id, at);
      this.stmts.save.run(toParams(next));
      return this.saved(current, next, patch, at, opts.detail);
    };
    return this.db.transaction(apply)();
  }

  /** After a save: the status change logged, the change told. */
  private saved(
    before: Readonly<CallRecord>,
    next: CallRecord,
    patch: CallPatch,
    at: string,
    detail: string | undefined,
  ): CallRecord {
    if (patch.status !== undefined && patch.status !== before.status) {
      this.stmts.addEvent.run(next.id, next.id, at, patch.status, detail ?? null);
    }
    this.onChange(before as CallRecord, next, at);
    return next;
  }

  events(id: string): CallEvent[] {
    return this.stmts.events.all(id) as CallEvent[];
  }

  query(companyId: string, q: CallQuery): { items: CallRecord[]; total: number } {
    const where = ['company_id = @companyId'];
    const params: Record<string, unknown> = { companyId, limit: q.limit, offset: q.offset };
    if (q.statuses && q.statuses.length > 0) {
      where.push(`status IN (${q.statuses.map((_, i) => `@s${i}`).join(', ')})`);
      q.statuses.forEach((s, i) => (params[`s${i}`] = s));
    }
    if (q.phoneNumber) {
      where.push('phone_number = @phoneNumber');
      params.phoneNumber = q.phoneNumber;
    }
    if (q.agentId) {
      where.push('agent_id = @agentId');
      params.agentId = q.agentId;
    }
    if (q.createdFrom) {
      where.push('created_at >= @createdFrom');
      params.createdFrom = q.createdFrom;
    }
    if (q.createdTo) {
      where.push('created_at < @createdTo');
      params.createdTo = q.createdTo;
    }
    const clause = where.join(' AND ');
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM calls WHERE ${clause}`).get(params) as {
        n: number;
      }
    ).n;
    const rows = this.db
      .prepare(
        `SELECT * FROM calls WHERE ${clause} ORDER BY created_at DESC, id LIMIT @limit OFFSET @offset`,
      )
      .all(params) as Row[];
    return { items: rows.map(toRecord), total };
  }

  /** Calls of a company in any of `statuses` (live-call counting). */
  countByStatus(companyId: string, statuses: readonly string[]): number {
    const marks = statuses.map(() => '?').join(', ');
    return (
      this.db
        .prepare(`SELECT count(*) AS n FROM calls WHERE company_id = ? AND status IN (${marks})`)
        .get(companyId, ...statuses) as { n: number }
    ).n;
  }

  /** Calls on a trunk (any company) in any of `statuses`. */
  countLiveOnTrunk(trunkId: string, statuses: readonly string[]): number {
    const marks = statuses.map(() => '?').join(', ');
    return (
      this.db
        .prepare(
          `SELECT count(*) AS n FROM calls WHERE json_extract(data, '$.sipTrunkId') = ? AND status IN (${marks})`,
        )
        .get(trunkId, ...statuses) as { n: number }
    ).n;
  }

  /** Transfer targets dialed by the gateway: `transferring` calls whose transfer goes `via: bridge`. */
  countTransferLegs(companyId: string): number {
    return (
      this.db
        .prepare(
          `SELECT count(*) AS n FROM calls WHERE company_id = ? AND status = 'transferring' AND json_extract(data, '$.transferringDetails.via') = 'bridge'`,
        )
        .get(companyId) as { n: number }
    ).n;
  }

  /** All calls (any company) in any of `statuses`: recovery after a restart. */
  findByStatus(statuses: readonly string[]): CallRecord[] {
    const marks = statuses.map(() => '?').join(', ');
    return (
      this.db.prepare(`SELECT * FROM calls WHERE status IN (${marks})`).all(...statuses) as Row[]
    ).map(toRecord);
  }
}

function merged(
  current: Readonly<CallRecord>,
  patch: CallPatch,
  id: string,
  at: string,
): CallRecord {
  return { ...current, ...patch, id, modifiedAt: at } as CallRecord;
}

function toParams(r: CallRecord): Record<string, unknown> {
  return {
    id: r.id,
    callId: r.callId,
    companyId: r.companyId,
    phoneNumber: r.phoneNumber,
    agentId: r.agentId,
    status: r.status,
    scheduledAt: r.scheduledAt,
    createdAt: r.createdAt,
    modifiedAt: r.modifiedAt,
    data: JSON.stringify(callDocument(r)),
  };
}

function toRecord(row: Row): CallRecord {
  return callRecordOf(row, JSON.parse(row.data));
}
