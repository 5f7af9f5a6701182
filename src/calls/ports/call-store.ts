// What the calls domain needs from storage: repositories and a unit of work.
// `src/store/` satisfies these on SQLite; a later store (PostgreSQL) plugs in
// here. No database types cross this line.
import type {
  CallEvent,
  CallPatch,
  CallQuery,
  CallRecord,
  CallUpdateOptions,
} from '../../model/call-record.js';
import type { CallStatus } from '../../model/call-status.js';
import type {
  Agent,
  Company,
  OptOut,
  OutboundRoute,
  Plan,
  SipTrunk,
  VoipPhone,
} from '../../model/entities.js';
import type { NewSchedule, ScheduleRow } from '../../model/schedule.js';
import type { CallHistory } from '../protections/call-history.js';
import type { DialogSnapshot } from './signaling-port.js';

/**
 * Runs `fn` as one transaction: all of its writes commit together or none
 * does. `serializeOn` (model/serialization-keys.ts) names what the decision
 * inside is about: on a store shared by several daemons, two transactions
 * naming one key run one after the other (multi-node-store.md rule 2).
 */
export interface UnitOfWork {
  run<T>(fn: () => T, serializeOn?: readonly string[]): T;
  /**
   * `run`, with the commit waited for without blocking: the promise
   * resolves with `fn`'s value once its writes are durable, and the daemon
   * goes on meanwhile (PostgreSQL: the commit is a round trip with a WAL
   * flush; SQLite: `run`, then `durable`). `onRan` is told when `fn` has
   * run and only the commit's durability is awaited.
   */
  runDurable<T>(fn: () => T, serializeOn?: readonly string[], onRan?: () => void): Promise<T>;
  /**
   * Resolves once everything committed so far is on disk, power loss
   * included. On SQLite a commit survives kill -9 as soon as it returns but
   * is fsynced in groups, off the event loop (docs/decisions/
   * group-commit.md): whatever reports or depends on a write outside the
   * daemon (an HTTP answer, an INVITE, a webhook) waits for this first. On
   * PostgreSQL a commit is durable when it returns.
   */
  durable(): Promise<void>;
}

export type UpdateOptions = CallUpdateOptions;

export interface CallRepository {
  insert(record: CallRecord): CallRecord;
  getById(id: string): CallRecord | undefined;
  /** A company's call by record id or callId. */
  get(companyId: string, idOrCallId: string): CallRecord | undefined;
  /** Merges `patch`; undefined when the record is missing or not in `onlyFrom`. */
  update(id: string, patch: CallPatch, at: string, opts?: UpdateOptions): CallRecord | undefined;
  /**
   * `update` for a caller that needs no answer: inside a unit of work on
   * PostgreSQL it is sent without waiting (a failure fails the unit).
   */
  patch(id: string, patch: CallPatch, at: string, opts?: UpdateOptions): void;
  events(id: string): CallEvent[];
  query(companyId: string, q: CallQuery): { items: CallRecord[]; total: number };
  countByStatus(companyId: string, statuses: readonly CallStatus[]): number;
  countLiveOnTrunk(trunkId: string, statuses: readonly CallStatus[]): number;
  /** Transfer targets dialed by the gateway (a second SIP channel): `transferring` calls with `via: bridge`. */
  countTransferLegs(companyId: string): number;
  findByStatus(statuses: readonly CallStatus[]): CallRecord[];
}

export interface ScheduleRepository {
  insert(s: NewSchedule, at: string): ScheduleRow | undefined;
  /**
   * Inserts the row of a record that has none (created in the same unit of
   * work); a taken idempotency key throws. Needs no answer: inside a unit of
   * work on PostgreSQL it is sent without waiting (a failure fails the unit).
   */
  add(s: NewSchedule, at: string): void;
  forCall(callRecordId: string): ScheduleRow[];
  openForCall(callRecordId: string): ScheduleRow[];
  claimDue(owner: string, now: number, leaseMs: number, limit: number, at: string): ScheduleRow[];
  markDispatched(id: number, owner: string, now: number, at: string): boolean;
  finish(id: number, state: 'done' | 'cancelled', outcome: string, at: string): boolean;
  release(id: number, owner: string, dueAt: number, outcome: string, at: string): boolean;
  staleDispatched(before: string): ScheduleRow[];
  rearm(id: number, dueAt: number, outcome: string, at: string): boolean;
  cancelForCall(callRecordId: string, outcome: string, at: string): number;
}

export interface OptOutRepository {
  get(companyId: string, phoneNumber: string): OptOut | undefined;
  save(optOut: OptOut): OptOut;
}

export interface CompanyReader {
  get(id: string): Company | undefined;
  getPlan(companyId: string): Plan | undefined;
  /** Takes a finished call's seconds and cost off the plan. */
  charge(companyId: string, seconds: number, cost: number, at: string): void;
}

/** Company-owned documents the domain reads. */
export interface DocumentReader<T> {
  get(companyId: string, id: string): T | undefined;
  getById(id: string): T | undefined;
  list(companyId: string): T[];
  listAll(): T[];
}

/**
 * Confirmed dialogs of live calls, kept so that a restart after a crash can
 * end them with BYE. One writer: the call's session (the leg's owner).
 */
export interface LiveDialogRepository {
  /** Keeps (or replaces) a confirmed dialog of the call record: the callee's unless `leg` says otherwise. */
  save(callRecordId: string, dialog: DialogSnapshot, at: string, leg?: DialogLeg): void;
  /** A dialog is over (BYE sent or received): `leg`'s, or without it every one of the record's. */
  remove(callRecordId: string, leg?: DialogLeg): void;
  /** Every dialog kept: at start-up, those a crash left behind. */
  list(): Array<{ callRecordId: string; leg: DialogLeg; dialog: DialogSnapshot }>;
}

/** Which of a call's dialogs: the callee's, or a transfer target's dialed by the gateway (issue 24). */
export type DialogLeg = 'callee' | 'transfer_target';

export interface CallStore {
  unitOfWork: UnitOfWork;
  calls: CallRepository;
  schedules: ScheduleRepository;
  optOuts: OptOutRepository;
  callHistory: CallHistory;
  dialogs: LiveDialogRepository;
  companies: CompanyReader;
  agents: DocumentReader<Agent>;
  sipTrunks: DocumentReader<SipTrunk>;
  voipPhones: DocumentReader<VoipPhone>;
  outboundRoutes: DocumentReader<OutboundRoute>;
}
