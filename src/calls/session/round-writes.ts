// The writes that move a dial round on, each in one unit of work: the gate's
// verdict on a number with the attempt it leads to, the round's end (final
// status, or the next round scheduled) with the plan's charge, and a round
// the gate deferred. The call session calls these with its own writer: it
// stays the only writer of its record (docs/decisions/dial-path.md).
import type { Clock } from '../../clock.js';
import type { CallRecord, DialedAttempt, SkippedAttempt } from '../../model/call-record.js';
import type { CallStatus } from '../../model/call-status.js';
import { companyKey, numberKey, trunkKey } from '../../model/serialization-keys.js';
import { LIVE_STATUSES } from '../../model/call-status.js';
import { channelsInUse, trunkChannelsInUse } from '../plan-limits.js';
import type { CallStore } from '../ports/call-store.js';
import { checkDial, type DialPurpose } from '../protections/dial-gate.js';
import type { DestinationZones } from '../protections/destination-zones.js';
import { applyTimeAndDayRules } from '../protections/evaluate-protections.js';
import { insertScheduleRow, scheduledPatch } from '../scheduling/schedule-call.js';
import type { RecordWriter } from './record-writer.js';
import type { RoundClosing } from './round-closing.js';

export type NumberPick =
  | { kind: 'dial'; index: number }
  | { kind: 'skip'; attempt: SkippedAttempt }
  /** The plan's channels are all taken: the attempt is written failed with `endCallReason`. */
  | { kind: 'no_channel'; endCallReason: string; endedAt: string }
  /** The record was not in a status this session may write from: another owner has it. */
  | { kind: 'lost' };

export interface PickRequest {
  number: string;
  round: number;
  destination: DestinationZones;
  purpose: DialPurpose;
  /** Statuses the record may be in (pre-dial until the session has claimed it). */
  from: readonly CallStatus[];
  idempotencyKey?: string;
}

/**
 * The gate's verdict and the write that acts on it, in one unit of work: a
 * skipped number is appended to the attempts; a number to dial gets its
 * attempt and the record moves to `trying` (the first time by a
 * compare-and-set from its pre-dial status: at most one session dials it).
 * When the plan (or the trunk) limits channels, the count and the move to
 * `trying` (which takes a channel) are serialized per company (per trunk),
 * so a burst of calls takes exactly the free channels, across daemons too;
 * a call that finds none gets a failed attempt and never holds one.
 */
export function pickNumber(
  store: CallStore,
  clock: Clock,
  writer: RecordWriter,
  req: PickRequest,
): NumberPick {
  const companyId = writer.current.companyId;
  const trunkId = writer.current.sipTrunkId;
  // Read before the unit, as the admission does: they decide the keys; the counts are read inside.
  const maxChannels = store.companies.getPlan(companyId)?.maxChannels ?? null;
  const trunkChannels = trunkId ? (store.sipTrunks.getById(trunkId)?.maxChannels ?? null) : null;
  const keys = [numberKey(companyId, req.number)];
  if (maxChannels !== null) keys.push(companyKey(companyId));
  if (trunkChannels !== null) keys.push(trunkKey(trunkId!));
  return store.unitOfWork.run((): NumberPick => {
    const record = writer.current;
    const verdict = checkDial(
      {
        record,
        number: req.number,
        destination: req.destination,
        settings: store.companies.get(record.companyId)?.settings ?? {},
        purpose: req.purpose,
      },
      { history: store.callHistory, optOuts: store.optOuts, clock },
    );
    const now = writer.now();
    if (verdict.kind === 'skip') {
      const attempt: SkippedAttempt = {
        number: req.number,
        round: req.round,
        status: 'skipped',
        skipReason: verdict.reason,
        at: now,
        ...(verdict.nextAllowedAt !== undefined
          ? { nextAllowedAt: new Date(verdict.nextAllowedAt).toISOString() }
          : {}),
      };
      const { attempts } = writer.attemptAppend(attempt);
      return writer.write({ attempts }, undefined, req.from)
        ? { kind: 'skip', attempt }
        : { kind: 'lost' };
    }
    const noChannel = channelRefusal(store, record, { maxChannels, trunkChannels });
    if (noChannel) {
      const { attempts } = writer.attemptAppend({
        number: req.number,
        round: req.round,
        startedAt: now,
        status: 'failed',
        endCallReason: noChannel,
        endedAt: now,
      });
      return writer.write({ attempts }, undefined, req.from)
        ? { kind: 'no_channel', endCallReason: noChannel, endedAt: now }
        : { kind: 'lost' };
    }
    const { attempts, index } = writer.attemptAppend({
      number: req.number,
      round: req.round,
      startedAt: now,
      ...(req.idempotencyKey ? { idempotencyKey: req.idempotencyKey } : {}),
    });
    return writer.status('trying', { attempts }, 'dial', req.from)
      ? { kind: 'dial', index }
      : { kind: 'lost' };
  }, keys);
}

/**
 * Why `record` may not take a channel now, if so: the plan's channels
 * (`no_channels_available_in_plan`) or its trunk's (`no_channels`) are all
 * held by live calls. A record already live (a later number of its round)
 * holds its own.
 */
function channelRefusal(
  store: CallStore,
  record: Readonly<CallRecord>,
  limits: { maxChannels: number | null; trunkChannels: number | null },
): string | undefined {
  const self = LIVE_STATUSES.includes(record.status) ? 1 : 0;
  if (
    limits.maxChannels !== null &&
    channelsInUse(store, record.companyId) - self >= limits.maxChannels
  )
    return 'no_channels_available_in_plan';
  if (
    limits.trunkChannels !== null &&
    record.sipTrunkId &&
    trunkChannelsInUse(store, record.sipTrunkId) - self >= limits.trunkChannels
  )
    return 'no_channels';
  return undefined;
}

/** The round's numbers not yet dialed (a round resumed after a crash skips those whose INVITE left). */
export function numbersOfRound(
  r: Readonly<CallRecord>,
  round: number,
  purpose: DialPurpose,
): string[] {
  const all =
    purpose === 'customer_callback' && r.callbackNumber
      ? [r.callbackNumber]
      : [r.phoneNumber, ...r.additionalPhoneNumbers];
  const sent = new Set(
    (r.attempts ?? [])
      .filter((a): a is DialedAttempt => a.status !== 'skipped' && a.round === round)
      .filter((a) => a.inviteSentAt !== undefined)
      .map((a) => a.number),
  );
  return [...new Set(all)].filter((n) => !sent.has(n));
}

/**
 * The round's end and the plan's charge in one transaction: one fsync, and a
 * crash cannot leave a charged call unfinished or a finished one uncharged.
 */
export function writeRoundEnd(
  store: CallStore,
  writer: RecordWriter,
  closing: RoundClosing,
  charge: { seconds: number; cost: number; at: string },
): void {
  const rec = writer.current;
  store.unitOfWork.run(() => {
    if (charge.seconds > 0 || charge.cost > 0) {
      store.companies.charge(rec.companyId, charge.seconds, charge.cost, charge.at);
    }
    if (closing.kind === 'final') {
      writer.status(closing.status, closing.patch);
      return;
    }
    const row = insertScheduleRow(
      store.schedules,
      rec.companyId,
      { recordId: rec.id, dueAt: closing.dueAt, kind: closing.scheduleKind, round: closing.round },
      writer.now(),
    );
    writer.write(
      { ...closing.patch, ...scheduledPatch(closing.scheduleKind, row, writer.now()) },
      `scheduled:${closing.scheduleKind}`,
    );
  });
}

/**
 * Nothing of the round was dialed: every number was refused by the gate.
 * The round waits for the earliest instant at which one may be dialed; when
 * none ever may (permanent opt-outs), the call is cancelled.
 */
export function writeDeferral(
  store: CallStore,
  writer: RecordWriter,
  round: number,
  skipped: readonly SkippedAttempt[],
  from: readonly CallStatus[],
): 'deferred' | 'cancelled' {
  const times = skipped.flatMap((s) => (s.nextAllowedAt ? [Date.parse(s.nextAllowedAt)] : []));
  const first = skipped[0];
  if (times.length === 0 || !first) {
    const reason = first?.skipReason ?? 'callee_opted_out';
    writer.status(
      'cancelled',
      { active: false, endAt: writer.now(), cancelledReason: reason },
      `protections:${reason}`,
      from,
    );
    return 'cancelled';
  }
  const rec = writer.current;
  const kind = rec.scheduledReason ?? 'initial';
  store.unitOfWork.run(() => {
    const row = insertScheduleRow(
      store.schedules,
      rec.companyId,
      { recordId: rec.id, dueAt: Math.min(...times), kind, round },
      writer.now(),
    );
    writer.write(
      { ...scheduledPatch(kind, row, writer.now()), scheduleCause: first.skipReason },
      `rescheduled:${first.skipReason}`,
      from,
    );
  });
  return 'deferred';
}

/**
 * `at` moved to the next instant the primary number's calling rules allow
 * (the gate judges every number again when the round is due).
 */
export function intoCallingRules(
  store: CallStore,
  r: Readonly<CallRecord>,
  number: string,
  at: number,
): number {
  const zones = r.destinationTimeZones;
  if (number !== r.phoneNumber || !zones || zones.length === 0) return at;
  try {
    const d = applyTimeAndDayRules(
      {
        settings: store.companies.get(r.companyId)?.settings ?? {},
        destination: { country: r.destinationCountry ?? null, zones },
        overrideTimeRestriction: r.overrideTimeRestriction,
        overrideDayRestriction: r.overrideDayRestriction,
      },
      at,
      at,
    );
    return Date.parse(d.at);
  } catch {
    return at; // the gate decides when the round is due
  }
}

/**
 * An exception ended the session: the record final at once (`failed` /
 * `failed_to_connect` before the answer, `failed_during_call` /
 * `voip_phone_service_failed` after, `endDetail: session_error`), and the
 * attempt in progress with it, so the counters see what was dialed.
 */
export function writeSessionError(writer: RecordWriter, attemptIndex: number | undefined): void {
  const answered = writer.current.status === 'in_call' || writer.current.status === 'transferring';
  const status = answered ? 'failed_during_call' : 'failed';
  const endCallReason = answered ? 'voip_phone_service_failed' : 'failed_to_connect';
  const endAt = writer.now();
  const attempts =
    attemptIndex === undefined
      ? {}
      : writer.attemptPatch(attemptIndex, { status, endCallReason, endedAt: endAt });
  writer.status(
    status,
    { ...attempts, endCallReason, endDetail: 'session_error', endAt, active: false },
    'session_error',
  );
}

/**
 * The record final now, whatever the session still waits for (drain past
 * its grace: `user_hungup`; a watchdog's second strike: `call_stuck`).
 * Returns the end reason, for the leg.
 */
export function writeForcedEnd(writer: RecordWriter, cause: 'shutdown' | 'watchdog'): string {
  const r = writer.current;
  const answered = r.status === 'in_call' || r.status === 'transferring';
  const [status, reason]: [CallStatus, string] =
    cause === 'shutdown'
      ? [answered ? 'answered' : 'cancelled', 'user_hungup']
      : [answered ? 'failed_during_call' : 'failed', 'call_stuck'];
  writer.status(status, {
    endCallReason: reason,
    endAt: writer.now(),
    active: false,
    endedBy: cause,
  });
  return reason;
}
