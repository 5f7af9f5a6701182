// A planned dial of a call record on the durable schedule (DESIGN
// "Reliability rules"): claimed under a lease, marked `dispatched` before
// the dial starts, never handed out again once dispatched.

export const SCHEDULE_KINDS = ['initial', 'retry', 'customer_callback', 'dropped_call'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];

export const SCHEDULE_STATES = ['pending', 'claimed', 'dispatched', 'done', 'cancelled'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];

export interface ScheduleRow {
  id: number;
  callRecordId: string;
  companyId: string;
  /** Unix ms. */
  dueAt: number;
  kind: ScheduleKind;
  /** 1-based dial attempt of the record this row plans. */
  attempt: number;
  state: ScheduleState;
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** How many times the row was claimed (more than 1 after a lease expired). */
  claims: number;
  idempotencyKey: string;
  outcome: string | null;
  createdAt: string;
  modifiedAt: string;
}

export interface NewSchedule {
  callRecordId: string;
  companyId: string;
  dueAt: number;
  kind: ScheduleKind;
  attempt: number;
  idempotencyKey: string;
}

/** A schedule row's idempotency key is taken (each planned dial has one row). */
export class ScheduleKeyTakenError extends Error {
  override readonly name = 'ScheduleKeyTakenError';

  constructor(idempotencyKey: string) {
    super(`a schedule row with idempotency key ${idempotencyKey} exists`);
  }
}
