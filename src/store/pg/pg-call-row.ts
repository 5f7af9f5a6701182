// A call record as a row of `calls` on PostgreSQL, and back (the columns and
// the document as both stores split them: ../call-columns.ts); the document
// is jsonb.
import type { CallRecord } from '../../model/call-record.js';
import { callDocument, callRecordOf, type CallColumns } from '../call-columns.js';
import { jsonb } from './jsonb.js';

export { CALL_COLUMNS as COLUMNS } from '../call-columns.js';

/** A row of `calls` as node-postgres returns it (jsonb arrives parsed). */
export interface CallRow extends CallColumns {
  data: Record<string, unknown>;
  node_id: string | null;
}

/** INSERT's parameters: the columns, then the document. */
export function toParams(r: CallRecord): unknown[] {
  return [
    r.id,
    r.callId,
    r.companyId,
    r.phoneNumber,
    r.agentId,
    r.status,
    r.scheduledAt,
    r.createdAt,
    r.modifiedAt,
    jsonb(callDocument(r)),
  ];
}

/** SAVE's parameters: the columns an update may change, and the document. */
export function saveParams(r: CallRecord): unknown[] {
  const [id, , , phoneNumber, agentId, status, scheduledAt, , modifiedAt, data] = toParams(r);
  return [id, phoneNumber, agentId, status, scheduledAt, modifiedAt, data];
}

/** A `calls` row as the record (shared with the call history, which reads the same rows). */
export function toCallRecord(row: CallRow): CallRecord {
  return callRecordOf(row, row.data);
}
