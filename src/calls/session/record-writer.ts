// The call session's pen: writes one call's record as it progresses (every
// status change with its timestamp, which the store logs), participants and
// attempts append-only, and never a change once a final status is stored.
// The session is the only writer of a live record, so the copy kept here is
// the record: nothing is read back to learn what someone else wrote.
import type { Clock } from '../../clock.js';
import type {
  Attempt,
  CallPatch,
  CallRecord,
  DialedAttempt,
  Participant,
} from '../../model/call-record.js';
import { OPEN_STATUSES, type CallStatus } from '../../model/call-status.js';
import { runUrgentWork } from '../../urgent-work.js';
import type { CallRepository } from '../ports/call-store.js';

export class RecordWriter {
  constructor(
    private readonly calls: CallRepository,
    private readonly clock: Clock,
    private record: CallRecord,
  ) {}

  get current(): Readonly<CallRecord> {
    return this.record;
  }

  now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Applies `patch` unless the record is final (or not in `onlyFrom`). */
  write(patch: CallPatch, detail?: string, onlyFrom: readonly string[] = OPEN_STATUSES): boolean {
    const next = this.calls.update(this.record.id, patch, this.now(), {
      onlyFrom,
      detail,
      ownedOnly: true,
    });
    runUrgentWork(); // a commit is a natural yield point in call set-up (urgent-work.ts)
    if (!next) return false;
    this.record = next;
    return true;
  }

  status(
    status: CallStatus,
    patch: CallPatch = {},
    detail?: string,
    onlyFrom?: readonly string[],
  ): boolean {
    return this.write({ ...patch, status }, detail, onlyFrom);
  }

  /** Appends a participant; returns its index. */
  addParticipant(p: Participant): number {
    const list = [...this.record.participants, p];
    this.write({ participants: list });
    return list.length - 1;
  }

  updateParticipant(index: number, patch: Partial<Participant>): void {
    this.write(this.participantPatch(index, patch));
  }

  /** The record patch that updates participant `index`, to merge into a status write. */
  participantPatch(index: number, patch: Partial<Participant>): { participants: Participant[] } {
    return {
      participants: this.record.participants.map((p, i) => (i === index ? { ...p, ...patch } : p)),
    };
  }

  /** The patch that appends `a` to the attempts, and its index. */
  attemptAppend(a: Attempt): { attempts: Attempt[]; index: number } {
    const attempts = [...(this.record.attempts ?? []), a];
    return { attempts, index: attempts.length - 1 };
  }

  /** The patch that updates the dialed attempt at `index`. */
  attemptPatch(index: number, patch: Partial<DialedAttempt>): { attempts: Attempt[] } {
    return {
      attempts: (this.record.attempts ?? []).map((a, i) =>
        i === index && a.status !== 'skipped' ? { ...a, ...patch } : a,
      ),
    };
  }

  updateAttempt(index: number, patch: Partial<DialedAttempt>): void {
    this.write(this.attemptPatch(index, patch));
  }
}
