// Schedules an existing record's next dial in a unit of work of its own,
// after checking its status: how the tests put calls on the schedule. The
// daemon schedules a new call with scheduleNewCall (in its admission) and
// later rounds with insertScheduleRow (in the round's own writes).
import type { Clock } from '../../../clock.js';
import { OPEN_STATUSES } from '../../../model/call-status.js';
import { CallError } from '../../call-error.js';
import type { CallRepository, ScheduleRepository, UnitOfWork } from '../../ports/call-store.js';
import {
  insertScheduleRow,
  scheduledPatch,
  type ScheduleCallRequest,
  type ScheduleResult,
} from '../schedule-call.js';

export interface ScheduleCallDeps {
  schedules: ScheduleRepository;
  calls: Pick<CallRepository, 'getById' | 'update'>;
  unitOfWork: UnitOfWork;
  clock: Clock;
}

/**
 * Schedules the record's next dial (row and record). Throws
 * `call_already_scheduled` when the record already has a row waiting
 * (pending or claimed), and `failed_to_schedule_call` when the record is
 * missing or not in `onlyFrom`.
 */
export function scheduleCall(deps: ScheduleCallDeps, req: ScheduleCallRequest): ScheduleResult {
  const nowIso = new Date(deps.clock.now()).toISOString();
  return deps.unitOfWork.run(() => {
    const record = deps.calls.getById(req.recordId);
    const from = req.onlyFrom ?? OPEN_STATUSES;
    if (!record || !from.includes(record.status)) {
      throw new CallError(
        'failed_to_schedule_call',
        record
          ? `The call cannot be scheduled from its status (${record.status}).`
          : 'No call record to schedule.',
      );
    }
    const result = insertScheduleRow(deps.schedules, record.companyId, req, nowIso);
    deps.calls.update(
      req.recordId,
      { ...req.patch, ...scheduledPatch(req.kind, result, nowIso) },
      nowIso,
      { onlyFrom: from, detail: `scheduled:${req.kind}` },
    );
    return result;
  });
}
