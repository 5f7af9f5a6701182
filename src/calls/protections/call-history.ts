// What the protections read about a number's past and current calls (a port;
// src/store/call-history-repository.ts implements it on SQLite), and how a
// record's dial attempts count (DESIGN "Ambiguities": a successful call was
// answered with 200 OK; a failed attempt ended before answer for any reason
// but our own cancel).
import { isSkipped, type CallRecord, type DialedAttempt } from '../../model/call-record.js';
import type { OptOut } from '../../model/entities.js';
import type { NumberFacts, NumberFactsQuery } from '../../model/number-facts.js';

export type { NumberFacts, NumberFactsQuery };

export interface CallHistory {
  /** Records that may dial the number (own or alternate) in one of `statuses`. */
  openForNumber(companyId: string, phoneNumber: string, statuses: readonly string[]): CallRecord[];
  /** Records that may have dialed the number and changed at or after `since` (ISO). */
  touchedSince(companyId: string, phoneNumber: string, since: string): CallRecord[];
  /** Latest record for number + agent created after `since` (ISO). */
  latestWithAgentSince(
    companyId: string,
    phoneNumber: string,
    agentId: string | null,
    since: string,
  ): CallRecord | undefined;
  /**
   * What an admission reads about one number, in one read (on PostgreSQL
   * each read is a round trip the request waits for): its opt-out and the
   * three answers above for `q`.
   */
  numberFacts(q: NumberFactsQuery): NumberFacts;
}

/**
 * The opt-out lookup and call history of one admission: `q`'s reads are
 * answered from `facts`, read at once; any other read goes to the stores.
 */
export function factsLookups(
  q: NumberFactsQuery,
  facts: NumberFacts,
  stores: {
    history: CallHistory;
    optOuts: { get(companyId: string, phoneNumber: string): OptOut | undefined };
  },
): {
  history: CallHistory;
  optOuts: { get(companyId: string, phoneNumber: string): OptOut | undefined };
} {
  const { history, optOuts } = stores;
  const same = (companyId: string, phoneNumber: string) =>
    companyId === q.companyId && phoneNumber === q.phoneNumber;
  return {
    optOuts: {
      get: (c, p) => (same(c, p) ? facts.optOut : optOuts.get(c, p)),
    },
    history: {
      openForNumber: (c, p, statuses) =>
        same(c, p) && sameList(statuses, q.openStatuses)
          ? facts.open
          : history.openForNumber(c, p, statuses),
      touchedSince: (c, p, since) =>
        same(c, p) && facts.touched && since === q.touchedSince
          ? facts.touched
          : history.touchedSince(c, p, since),
      latestWithAgentSince: (c, p, agentId, since) =>
        same(c, p) && agentId === q.agentId && since === q.agentSince
          ? facts.latestWithAgent
          : history.latestWithAgentSince(c, p, agentId, since),
      numberFacts: (x) => history.numberFacts(x),
    },
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Statuses of an attempt or record that was answered (reached 200 OK). */
export const ANSWERED_STATUSES: readonly string[] = [
  'answered',
  'voice_mail',
  'failed_during_call',
  'transferred',
  'transferring',
  'in_call',
];
/** Statuses of an attempt that ended before answer, not by our own cancel. */
export const FAILED_ATTEMPT_STATUSES: readonly string[] = ['busy', 'missed', 'failed'];

export interface NumberCallEvent {
  kind: 'answered' | 'failed';
  /** Unix ms: answer time (answered) or end time (failed). */
  at: number;
  /** Unix ms the answered call ended, when it has. */
  endedAt?: number;
  recordId: string;
}

/**
 * The answered calls and failed attempts to `phoneNumber` found in the
 * records: by `attempts[]` when the record has them, else by the record
 * itself (its `startAt` marks an answer). Inbound records never count.
 */
export function callEventsForNumber(
  records: readonly CallRecord[],
  phoneNumber: string,
): NumberCallEvent[] {
  const out: NumberCallEvent[] = [];
  for (const r of records) {
    if (r.callDirection === 'inbound') continue;
    const attempts = r.attempts ?? [];
    if (attempts.length > 0) {
      for (const a of attempts) {
        // Counters count what was dialed: never a skipped number, nor an
        // attempt whose INVITE never left (records before issue 21 have no round).
        if (isSkipped(a) || (a.round !== undefined && !a.inviteSentAt)) continue;
        if ((a.number ?? r.phoneNumber) !== phoneNumber) continue;
        const e = attemptEvent(a, r.id);
        if (e) out.push(e);
      }
    } else if (r.phoneNumber === phoneNumber) {
      const e = recordEvent(r);
      if (e) out.push(e);
    }
  }
  return out.sort((x, y) => x.at - y.at);
}

function attemptEvent(a: DialedAttempt, recordId: string): NumberCallEvent | undefined {
  const answered =
    time(a.answeredAt) ??
    (ANSWERED_STATUSES.includes(a.status ?? '') ? time(a.startedAt) : undefined);
  if (answered !== undefined)
    return { kind: 'answered', at: answered, endedAt: time(a.endedAt), recordId };
  if (FAILED_ATTEMPT_STATUSES.includes(a.status ?? '')) {
    const at = time(a.endedAt) ?? time(a.startedAt);
    if (at !== undefined) return { kind: 'failed', at, recordId };
  }
  return undefined;
}

function recordEvent(r: CallRecord): NumberCallEvent | undefined {
  const started = time(r.startAt);
  if (started !== undefined) {
    return { kind: 'answered', at: started, endedAt: time(r.endAt), recordId: r.id };
  }
  if (FAILED_ATTEMPT_STATUSES.includes(r.status)) {
    const at = time(r.endAt) ?? time(r.modifiedAt);
    if (at !== undefined) return { kind: 'failed', at, recordId: r.id };
  }
  return undefined;
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}
