// Puts a call record on the durable schedule: one pending row (idempotency
// key `<recordId>:<attempt>`) and the record's scheduling fields (spec §2.5
// "Scheduling and request echoes"), in one transaction.
import type { Clock } from '../../clock.js';
import type { CallRecord, SqliteCallRepository } from '../../store/call-repository.js';
import type { ScheduleKind, SqliteScheduleRepository } from '../../store/schedule-repository.js';
import { CallError } from '../call-error.js';
import { OPEN_STATUSES } from '../call-status.js';

/** spec §2.5 `scheduledReason` (an initial schedule has none). */
export type ScheduledReason = 'retry' | 'customer_callback' | 'dropped_call';

export interface ScheduleResult {
  scheduleId: number;
  recordId: string;
  kind: ScheduleKind;
  /** 1-based dial attempt of the record. */
  attempt: number;
  /** ISO instant the call is due. */
  dueAt: string;
  idempotencyKey: string;
}

export interface ScheduleCallDeps {
  schedules: SqliteScheduleRepository;
  calls: Pick<SqliteCallRepository, 'getById' | 'update'>;
  clock: Clock;
}

export interface ScheduleCallRequest {
  recordId: string;
  dueAt: number;
  kind: ScheduleKind;
  /** Extra record fields to write with the schedule (zones, retries, ...). */
  patch?: Partial<CallRecord>;
}

/**
 * Schedules the record's next dial. Throws `call_already_scheduled` when the
 * record already has a row waiting (pending or claimed), and
 * `failed_to_schedule_call` when the record is missing or already final.
 * An `initial` row is attempt 1; later ones follow the record's rows.
 */
export function scheduleCall(deps: ScheduleCallDeps, req: ScheduleCallRequest): ScheduleResult {
  const nowIso = new Date(deps.clock.now()).toISOString();
  return deps.schedules.transaction(() => {
    const record = deps.calls.getById(req.recordId);
    if (!record || !(OPEN_STATUSES as readonly string[]).includes(record.status)) {
      throw new CallError(
        'failed_to_schedule_call',
        record
          ? `The call has already ended (${record.status}) and cannot be scheduled again.`
          : 'No call record to schedule.',
      );
    }
    const rows = deps.schedules.forCall(req.recordId);
    if (rows.some((r) => r.state === 'pending' || r.state === 'claimed')) {
      throw new CallError('call_already_scheduled', 'This call is already scheduled.');
    }
    const attempt =
      req.kind === 'initial' ? 1 : Math.max(1, ...rows.map((r) => r.attempt), dialed(record)) + 1;
    const idempotencyKey = `${req.recordId}:${attempt}`;
    const row = deps.schedules.insert(
      {
        callRecordId: req.recordId,
        companyId: record.companyId,
        dueAt: req.dueAt,
        kind: req.kind,
        attempt,
        idempotencyKey,
      },
      nowIso,
    );
    if (!row) {
      throw new CallError('call_already_scheduled', `Attempt ${attempt} is already scheduled.`);
    }
    const dueIso = new Date(req.dueAt).toISOString();
    const again = req.kind !== 'initial';
    deps.calls.update(
      req.recordId,
      {
        ...req.patch,
        status: 'scheduled',
        scheduledAt: dueIso,
        ...(again ? { rescheduled: true, rescheduledAt: nowIso } : {}),
        ...(req.kind !== 'initial' ? { scheduledReason: req.kind } : {}),
      },
      nowIso,
      { onlyFrom: OPEN_STATUSES, detail: `scheduled:${req.kind}` },
    );
    return {
      scheduleId: row.id,
      recordId: req.recordId,
      kind: req.kind,
      attempt,
      dueAt: dueIso,
      idempotencyKey,
    };
  });
}

/** Dial attempts already made on the record (its `attempts[]`, else retries + 1). */
function dialed(record: CallRecord): number {
  if (Array.isArray(record.attempts) && record.attempts.length > 0) return record.attempts.length;
  return (typeof record.retries === 'number' ? record.retries : 0) + 1;
}
