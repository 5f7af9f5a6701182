// The call session's pen: writes one call's record as it progresses (every
// status change with its timestamp, which the store logs), participants and
// attempts append-only, and never a change once a final status is stored.
// The session is the only writer of a live record, so the copy kept here is
// the record: nothing is read back to learn what someone else wrote, and
// the store is handed this copy so it need not read it either.
//
// A change that reports nothing by itself (a participant joining or leaving
// beside a status change, the attempt's end before the final status) is
// staged: kept here and carried by the record's next write, so a call
// costs five record writes instead of eleven. Every round ends in a write
// (its final status, the next round, or a forced finish), so nothing staged
// is left behind; a staged change on a record already final is dropped, as
// a write of it would be.
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
  /** The record as last stored. */
  private stored: CallRecord;
  /** Changes kept for the next write. */
  private staged: CallPatch | undefined;

  constructor(
    private readonly calls: CallRepository,
    private readonly clock: Clock,
    private record: CallRecord,
  ) {
    this.stored = record;
  }

  /** The record with the changes staged since the last write. */
  get current(): Readonly<CallRecord> {
    return this.record;
  }

  now(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Applies `patch`, with what was staged, unless the record is final (or not in `onlyFrom`). */
  write(patch: CallPatch, detail?: string, onlyFrom: readonly string[] = OPEN_STATUSES): boolean {
    const withStaged = this.staged ? { ...this.staged, ...patch } : patch;
    const next = this.calls.update(this.record.id, withStaged, this.now(), {
      onlyFrom,
      detail,
      ownedOnly: true,
      current: this.stored,
    });
    runUrgentWork(); // a commit is a natural yield point in call set-up (urgent-work.ts)
    if (!next) {
      // Refused by a narrower onlyFrom while the record is open: what was staged still goes.
      if (this.staged && onlyFrom !== OPEN_STATUSES) this.write({});
      return false;
    }
    this.record = this.stored = next;
    this.staged = undefined;
    return true;
  }

  /** Keeps `patch` for the next write (see the top of this file). */
  stage(patch: CallPatch): void {
    this.staged = { ...this.staged, ...patch };
    this.record = { ...this.record, ...patch } as CallRecord;
  }

  status(
    status: CallStatus,
    patch: CallPatch = {},
    detail?: string,
    onlyFrom?: readonly string[],
  ): boolean {
    return this.write({ ...patch, status }, detail, onlyFrom);
  }

  /** Appends a participant, carried by the next write; returns its index. */
  stageParticipant(p: Participant): number {
    const list = [...this.record.participants, p];
    this.stage({ participants: list });
    return list.length - 1;
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
