// Writes one call's record as it progresses: every status change with its
// timestamp (the store logs it in call_events), participants append-only,
// and never a change once a final status is stored.
import type { Clock } from '../clock.js';
import type { CallRecord } from '../store/call-repository.js';
import type { Store } from '../store/store.js';
import { OPEN_STATUSES, type CallStatus } from './call-status.js';
import { runUrgentWork } from '../urgent-work.js';

export type ParticipantStatus =
  | 'invited'
  | 'ringing'
  | 'joined'
  | 'left'
  | 'no_answer'
  | 'rejected'
  | 'failed'
  | 'cancelled'
  | 'unreachable';

export interface Participant {
  type: 'ai' | 'trunk';
  role: 'Agent' | 'Contact';
  status: ParticipantStatus;
  deviceKind?: 'trunk';
  invitedAt: string;
  joinedAt?: string;
  leftAt?: string;
  phoneNumber?: string;
  callId?: string;
  agentId?: string;
  agentName?: string;
  codec?: string;
  hertz?: number;
  rtpPort?: number;
  serverIp?: string;
  remoteAddress?: string;
  remotePort?: number;
  initiator?: boolean;
  durationSeconds?: number;
}

export interface Attempt {
  number: string;
  idempotencyKey?: string;
  answeredAt?: string;
  sipCallId?: string;
  startedAt: string;
  endedAt?: string;
  status?: string;
  endCallReason?: string;
  sipFailure?: unknown;
}

export class CallRecordWriter {
  private record: CallRecord;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    recordId: string,
  ) {
    const found = store.calls.getById(recordId);
    if (!found) throw new Error(`call record ${recordId} not found`);
    this.record = found;
  }

  get current(): Readonly<CallRecord> {
    return this.record;
  }

  now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Applies `patch` (and a status change) unless the record is final (or not in `onlyFrom`). */
  write(
    patch: Partial<CallRecord>,
    detail?: string,
    onlyFrom: readonly string[] = OPEN_STATUSES,
  ): boolean {
    const next = this.store.calls.update(this.record.id, patch, this.now(), { onlyFrom, detail });
    runUrgentWork(); // a commit is a natural yield point in call set-up (urgent-work.ts)
    if (!next) return false;
    this.record = next;
    return true;
  }

  status(
    status: CallStatus,
    patch: Partial<CallRecord> = {},
    detail?: string,
    onlyFrom?: readonly string[],
  ): boolean {
    return this.write({ ...patch, status }, detail, onlyFrom);
  }

  /** Reads the stored record again (after another component changed it). */
  reload(): CallRecord {
    this.record = this.store.calls.getById(this.record.id) ?? this.record;
    return this.record;
  }

  get participants(): Participant[] {
    return (this.record.participants as Participant[] | undefined) ?? [];
  }

  get attempts(): Attempt[] {
    return (this.record.attempts as Attempt[] | undefined) ?? [];
  }

  /** Appends a participant; returns its index. */
  addParticipant(p: Participant): number {
    const list = [...this.participants, p];
    this.write({ participants: list });
    return list.length - 1;
  }

  /** Updates the participant at `index` (the list itself only grows). */
  updateParticipant(index: number, patch: Partial<Participant>): void {
    this.write(this.participantPatch(index, patch));
  }

  /** The record patch that updates participant `index`, to merge into a status write. */
  participantPatch(index: number, patch: Partial<Participant>): { participants: Participant[] } {
    return {
      participants: this.participants.map((p, i) => (i === index ? { ...p, ...patch } : p)),
    };
  }

  addAttempt(a: Attempt): number {
    const list = [...this.attempts, a];
    this.write({ attempts: list });
    return list.length - 1;
  }

  updateAttempt(index: number, patch: Partial<Attempt>): void {
    this.write({ attempts: this.attempts.map((a, i) => (i === index ? { ...a, ...patch } : a)) });
  }
}
