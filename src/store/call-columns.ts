// A call record as a row of `calls`, in both stores: the indexed fields are
// columns, the rest of the record is one JSON document (`data`).
import type { CallRecord } from '../model/call-record.js';

const COLUMN_KEYS = [
  'id',
  'callId',
  'companyId',
  'phoneNumber',
  'agentId',
  'status',
  'scheduledAt',
  'createdAt',
  'modifiedAt',
] as const;
/** The record's fields that are columns of `calls`. */
export const CALL_COLUMNS: ReadonlySet<string> = new Set(COLUMN_KEYS);

/** The columns of a `calls` row, as both drivers return them. */
export interface CallColumns {
  id: string;
  call_id: string;
  company_id: string;
  phone_number: string;
  agent_id: string | null;
  status: string;
  scheduled_at: string | null;
  created_at: string;
  modified_at: string;
}

/** The record's document: every field that is not a column, undefined ones dropped. */
export function callDocument(r: CallRecord): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!CALL_COLUMNS.has(k) && v !== undefined) data[k] = v;
  return data;
}

/** A row's columns and its parsed document as the record. */
export function callRecordOf(row: CallColumns, data: unknown): CallRecord {
  return {
    ...(data as Omit<CallRecord, (typeof COLUMN_KEYS)[number]>),
    id: row.id,
    callId: row.call_id,
    companyId: row.company_id,
    phoneNumber: row.phone_number,
    agentId: row.agent_id,
    status: row.status as CallRecord['status'],
    scheduledAt: row.scheduled_at,
    createdAt: row.created_at,
    modifiedAt: row.modified_at,
  };
}
