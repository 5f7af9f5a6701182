// Runs accepted calls: one CallSession per dial round, live ones tracked by
// record id so the hangup API and shutdown reach them. Recovery after a
// restart and the watchdog follow docs/decisions/dial-path.md: a call whose
// INVITE provably never left is dialed (through the gate), one whose INVITE
// may have left is finished and handed to the retry policy; the watchdog
// measures each session against its own deadlines.
import type { ConsultAction } from './ports/agent-link.js';
import type { CallRecord, DialedAttempt } from '../model/call-record.js';
import { LIVE_STATUSES, type CallStatus } from '../model/call-status.js';
import type { CallDispatcher } from './call-service.js';
import { CallSession, type CallSessionDeps } from './session/call-session.js';
import type { DialogSnapshot } from './ports/signaling-port.js';
import type { DialogLeg } from './ports/call-store.js';
import { finishOrphan } from './session/orphan.js';
import type { TransferBody, TransferResult } from './transfer/transfer-request.js';

export interface DialerSettings {
  defaultRingTimeoutSeconds: number;
  defaultMaxDurationSeconds: number;
  /** Slack past a session's own limits before the watchdog steps in. */
  stuckAfterSeconds: number;
  watchdogIntervalMs?: number;
  /** RTP silence after which an answered call's far end is asked if it is still there (0: never). */
  mediaInactivitySeconds?: number;
}

/** How long the hangup API waits for the call's final record. */
const HANGUP_WAIT_MS = 5000;

export class Dialer implements CallDispatcher {
  private readonly sessions = new Map<string, CallSession>();
  private readonly running = new Set<Promise<unknown>>();
  /** Sessions the watchdog already asked to stop (a second strike forces the record final). */
  private readonly struck = new Set<CallSession>();
  private watchdog: unknown;
  private draining = false;
  private readonly recoveryByes = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: Omit<CallSessionDeps, 'settings'> & { settings: DialerSettings },
    /** Called with each finished round's record (metrics). */
    private readonly onFinished?: (record: CallRecord) => void,
  ) {}

  get liveCalls(): number {
    return this.sessions.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** The scheduler's dial: a due call or retry (see Scheduler's DialFn). */
  async dial(recordId: string, attempt: { idempotencyKey: string }): Promise<void> {
    const record = this.deps.store.calls.getById(recordId);
    if (record) this.accepted(record, attempt.idempotencyKey);
  }

  accepted(record: CallRecord, idempotencyKey?: string): void {
    if (this.draining || this.sessions.has(record.id)) return;
    const session = new CallSession(record, this.deps, idempotencyKey);
    this.sessions.set(record.id, session);
    const run = session
      .run()
      .then((finished) => this.onFinished?.(finished))
      .catch((err: unknown) =>
        this.deps.log.error({ err, callId: record.callId }, 'call session crashed'),
      )
      .finally(() => {
        this.sessions.delete(record.id);
        this.struck.delete(session);
        this.running.delete(run);
      });
    this.running.add(run);
  }

  /** Ends a live call; resolves with its final record (bounded wait), or undefined when not ours. */
  async hangup(record: CallRecord): Promise<CallRecord | undefined> {
    const session = this.sessions.get(record.id);
    if (!session) return undefined;
    session.stop('api');
    let timer: unknown;
    const timeout = new Promise<undefined>(
      (resolve) => (timer = this.deps.timers.setTimeout(() => resolve(undefined), HANGUP_WAIT_MS)),
    );
    const done = await Promise.race([session.done, timeout]);
    this.deps.timers.clearTimeout(timer);
    return done ?? this.deps.store.calls.getById(record.id);
  }

  /** Transfers a live call (the session decides whether it can); undefined when not ours. */
  transfer(record: CallRecord, body: TransferBody): Promise<TransferResult> | undefined {
    const session = this.sessions.get(record.id);
    if (!session) return undefined;
    return session.transfer(body, 'api');
  }

  /** Merge, cancel or swap of the consult under way; undefined when the call is not ours. */
  consult(record: CallRecord, action: ConsultAction): Promise<TransferResult> | undefined {
    return this.sessions.get(record.id)?.consult(action);
  }

  /**
   * After a restart: a live record whose current round never sent its
   * INVITE is dialed now; one whose INVITE may have left is finished
   * (call_stuck) and handed to the retry policy; accepted calls are dialed.
   * Every dialog the dead process kept (an answered call) gets a BYE, so the
   * far end does not keep a channel nobody will hang up.
   */
  recover(): void {
    const { store } = this.deps;
    const left = store.dialogs.list();
    const withDialog = new Set(left.map((d) => d.callRecordId));
    for (const rec of store.calls.findByStatus(LIVE_STATUSES)) {
      if (inviteMayHaveLeft(rec)) {
        const detail = withDialog.has(rec.id) ? 'dialog_ended_after_restart' : undefined;
        finishOrphan(this.deps, rec, 'recovery', detail);
        continue;
      }
      this.redial(rec, 'recovered_before_invite');
    }
    for (const rec of store.calls.findByStatus(['to_be_processed'])) this.accepted(rec);
    this.deps.onScheduled?.();
    this.endLeftDialogs(left);
  }

  /**
   * A lost peer's unfinished records, now this node's (docs/decisions/
   * multi-node-store.md rule 4): handled as after a restart, with a detail
   * naming the lost node. Its answered dialogs get a BYE from here.
   */
  adopt(records: readonly CallRecord[], lostNodeId: string): void {
    const detail = `node ${lostNodeId} lost`;
    const ids = new Set(records.map((r) => r.id));
    const left = this.deps.store.dialogs.list().filter((d) => ids.has(d.callRecordId));
    for (const rec of records) {
      if (this.sessions.has(rec.id)) continue;
      if (rec.status === 'to_be_processed') this.accepted(rec);
      else if (inviteMayHaveLeft(rec)) finishOrphan(this.deps, rec, 'recovery', detail);
      else this.redial(rec, detail);
    }
    this.endLeftDialogs(left);
  }

  private endLeftDialogs(
    left: Array<{ callRecordId: string; leg: DialogLeg; dialog: DialogSnapshot }>,
  ): void {
    for (const { callRecordId, leg, dialog } of left) this.endLeftDialog(callRecordId, leg, dialog);
    if (left.length > 0)
      this.deps.log.warn({ dialogs: left.length }, 'dialogs left by a crash: sending BYE');
  }

  /** Byes still in flight from recover(). */
  get pendingRecoveryByes(): Promise<unknown> {
    return Promise.all([...this.recoveryByes]);
  }

  /** BYE for a dialog a crash left behind (RFC 3261 §15); forgotten once answered or timed out. */
  private endLeftDialog(recordId: string, leg: DialogLeg, dialog: DialogSnapshot): void {
    const { store, signaling, log } = this.deps;
    const forget = () => {
      try {
        store.dialogs.remove(recordId, leg);
      } catch (err) {
        log.warn({ err }, 'ended dialog not forgotten');
      }
    };
    if (!signaling.endDialog) {
      log.warn({ sipCallId: dialog.callId }, 'this SIP engine cannot end a dialog left by a crash');
      forget();
      return;
    }
    const bye = signaling
      .endDialog(dialog, { q850: 41, text: 'gateway restarted' })
      .then(
        (status) =>
          log.info({ sipCallId: dialog.callId, status }, 'BYE for a dialog left by a crash'),
        (err: unknown) => log.warn({ err, sipCallId: dialog.callId }, 'BYE after restart failed'),
      )
      .finally(() => {
        forget();
        this.recoveryByes.delete(bye);
      });
    this.recoveryByes.add(bye);
  }

  startWatchdog(): void {
    const every = this.deps.settings.watchdogIntervalMs ?? 30_000;
    this.watchdog = this.deps.timers.setInterval(() => this.checkStuck(), every);
  }

  /**
   * The last resort: sessions past their own deadline are stopped (and, if
   * that does not end them, finished); records no session owns are
   * recovered as after a restart.
   */
  checkStuck(): void {
    const { clock, store, settings } = this.deps;
    const now = clock.now();
    for (const session of this.sessions.values()) {
      if (now <= session.clock.deadline) continue;
      if (this.struck.has(session)) session.forceFinish('watchdog');
      else {
        this.struck.add(session);
        this.deps.log.warn({ phase: session.phase }, 'call made no progress: watchdog ends it');
        session.stop('watchdog');
      }
    }
    const staleBefore = now - 1000 * settings.stuckAfterSeconds;
    const orphans: CallStatus[] = [...LIVE_STATUSES, 'to_be_processed'];
    for (const rec of store.calls.findByStatus(orphans)) {
      if (this.sessions.has(rec.id) || Date.parse(rec.modifiedAt) > staleBefore) continue;
      if (rec.status === 'to_be_processed') this.accepted(rec);
      else if (inviteMayHaveLeft(rec)) finishOrphan(this.deps, rec, 'watchdog');
      else this.redial(rec, 'watchdog_before_invite');
    }
  }

  /**
   * SIGTERM: take no new calls, end live ones (CANCEL or BYE: each record is
   * final once its request is sent), wait for the sessions, and finish the
   * record of any session still running when the grace period ends.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.watchdog) this.deps.timers.clearInterval(this.watchdog);
    for (const session of this.sessions.values()) session.stop('shutdown');
    let timer: unknown;
    const timeout = new Promise<void>(
      (resolve) => (timer = this.deps.timers.setTimeout(resolve, timeoutMs)),
    );
    await Promise.race([Promise.all([...this.running]), timeout]);
    this.deps.timers.clearTimeout(timer);
    for (const session of this.sessions.values()) {
      try {
        session.forceFinish('shutdown');
      } catch (err) {
        this.deps.log.error({ err }, 'record not finished at shutdown');
      }
    }
  }

  /**
   * A live record whose round never sent its INVITE: back to
   * `to_be_processed` (one compare-and-set: at most one session takes it)
   * and dialed, through the gate.
   */
  private redial(rec: CallRecord, detail: string): void {
    const again = this.deps.store.calls.update(
      rec.id,
      { ...closeUnsentAttempts(rec, this.now()), status: 'to_be_processed' },
      this.now(),
      { onlyFrom: [rec.status], detail },
    );
    if (again) this.accepted(again);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

/** The current round has an attempt whose INVITE may have reached the far end. */
function inviteMayHaveLeft(rec: CallRecord): boolean {
  const round = rec.dialRound ?? rec.retries + 1;
  return (rec.attempts ?? []).some(
    (a) =>
      a.status !== 'skipped' &&
      ((a.round === round && a.inviteSentAt !== undefined) || a.round === undefined),
  );
}

/** Attempts of a dead session that never sent their INVITE, closed as such. */
function closeUnsentAttempts(rec: CallRecord, at: string): Pick<CallRecord, 'attempts'> {
  return {
    attempts: (rec.attempts ?? []).map((a) =>
      a.status === undefined && !(a as DialedAttempt).inviteSentAt
        ? { ...a, status: 'cancelled', endCallReason: 'not_dialed', endedAt: at }
        : a,
    ),
  };
}
