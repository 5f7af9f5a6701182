// Puts a call record on the durable schedule: one pending row and the
// record's scheduling fields (spec §2.5 "Scheduling and request echoes"),
// in the caller's unit of work. The row's idempotency key is `<recordId>:<round>`
// (`:<n>` added when the gate deferred the same round before).
import type { CallPatch, CallRecord } from '../../model/call-record.js';
import type { ScheduleKind } from '../../model/schedule.js';
import { CallError } from '../call-error.js';
import type { CallRepository, ScheduleRepository } from '../ports/call-store.js';

export interface ScheduleResult {
  scheduleId: number;
  recordId: string;
  kind: ScheduleKind;
  /** The dial round the row plans. */
  round: number;
  /** ISO instant the call is due. */
  dueAt: string;
  idempotencyKey: string;
}

export interface ScheduleCallRequest {
  recordId: string;
  dueAt: number;
  kind: ScheduleKind;
  round: number;
  /** Extra record fields to write with the schedule (retries, reason, …). */
  patch?: CallPatch;
  /** Statuses the record may be scheduled from (default: any open one). */
  onlyFrom?: readonly string[];
}

/**
 * Schedules the first dial of a record inserted in the same unit of work (call
 * inside it): the record is `to_be_processed` and has no schedule rows, so
 * nothing is read back, and the writes need no answer (on PostgreSQL they go
 * with the unit's commit instead of a round trip each).
 */
export function scheduleNewCall(
  deps: { schedules: Pick<ScheduleRepository, 'add'>; calls: Pick<CallRepository, 'patch'> },
  record: Pick<CallRecord, 'id' | 'companyId'>,
  req: { dueAt: number; nowIso: string },
): void {
  const idempotencyKey = `${record.id}:1`;
  deps.schedules.add(
    {
      callRecordId: record.id,
      companyId: record.companyId,
      dueAt: req.dueAt,
      kind: 'initial',
      attempt: 1,
      idempotencyKey,
    },
    req.nowIso,
  );
  deps.calls.patch(
    record.id,
    scheduledPatch(
      'initial',
      { idempotencyKey, dueAt: new Date(req.dueAt).toISOString() },
      req.nowIso,
    ),
    req.nowIso,
    { onlyFrom: ['to_be_processed'], detail: 'scheduled:initial' },
  );
}

/** The record fields of a scheduled dial (spec §2.5 "Scheduling and request echoes"). */
export function scheduledPatch(
  kind: ScheduleKind,
  row: Pick<ScheduleResult, 'idempotencyKey' | 'dueAt'>,
  nowIso: string,
): CallPatch {
  const again = kind !== 'initial' || row.idempotencyKey.split(':').length > 2;
  return {
    status: 'scheduled',
    scheduledAt: row.dueAt,
    ...(again ? { rescheduled: true, rescheduledAt: nowIso } : {}),
    ...(kind !== 'initial' ? { scheduledReason: kind } : {}),
  };
}

/** Inserts the pending row of the record's next dial (call inside a unit of work). */
export function insertScheduleRow(
  schedules: ScheduleRepository,
  companyId: string,
  req: Pick<ScheduleCallRequest, 'recordId' | 'dueAt' | 'kind' | 'round'>,
  nowIso: string,
): ScheduleResult {
  const rows = schedules.forCall(req.recordId);
  if (rows.some((r) => r.state === 'pending' || r.state === 'claimed')) {
    throw new CallError('call_already_scheduled', 'This call is already scheduled.');
  }
  const sameRound = rows.filter((r) => r.attempt === req.round).length;
  const idempotencyKey = `${req.recordId}:${req.round}${sameRound > 0 ? `:${sameRound + 1}` : ''}`;
  const row = schedules.insert(
    {
      callRecordId: req.recordId,
      companyId,
      dueAt: req.dueAt,
      kind: req.kind,
      attempt: req.round,
      idempotencyKey,
    },
    nowIso,
  );
  if (!row) {
    throw new CallError('call_already_scheduled', `Round ${req.round} is already scheduled.`);
  }
  const dueIso = new Date(req.dueAt).toISOString();
  return {
    scheduleId: row.id,
    recordId: req.recordId,
    kind: req.kind,
    round: req.round,
    dueAt: dueIso,
    idempotencyKey,
  };
}
