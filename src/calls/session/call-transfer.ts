// One blind transfer of a connected call (issue 24): REFER in the dialog
// (RFC 3515), the far end's progress, and its outcome on the record, through
// the session's writer (the session stays the only writer of its record).
// While it runs the call is `transferring`; `transferringDetails` says how it
// goes, a `transfer` participant stands for the target, and the finished
// attempt is appended to `transferAttempts`. Success: the session ends our
// leg (BYE) and the call is `transferred` / `call_transferred`; anything
// else: the call is `in_call` again with the agent.
import type { Logger } from 'pino';
import type {
  NetworkQuality,
  ParticipantStatus,
  TransferRequestedBy,
} from '../../model/call-record.js';
import type { TransferProgressEvent } from '../ports/agent-link.js';
import type { ReferOutcome, ReferProgress, SignalingLeg } from '../ports/signaling-port.js';
import type { Timers } from '../timers.js';
import type { TransferRequest, TransferResult } from '../transfer/transfer-request.js';
import type { RecordWriter } from './record-writer.js';
import type { TargetDial } from './target-bridge.js';
import { TransferRecord, type TransferEnding } from './transfer-record.js';

/** The leg's default wait for the final NOTIFY (signaling-port.ts). */
const DEFAULT_REFER_TIMEOUT_MS = 32_000;
/** Past the leg's own timeout, the session stops waiting for it. */
const GUARD_SLACK_MS = 5_000;

export interface TransferHooks {
  /** Tells the agent (its `transfer` events). */
  tell(event: TransferProgressEvent): void;
  /** The far end took the call over: end our leg (BYE), `call_transferred`. */
  transferred(): void;
  /**
   * The REFER was refused and the request asks for fallbackToBridge: dial
   * the destination as a second leg and bridge it (target-bridge.ts).
   * Resolves once it answered (bridged) or could not be reached; the leg
   * and media of a failed dial are already let go of.
   */
  bridge?(): Promise<TargetDial>;
}

export interface TransferTarget {
  referTo: string;
  referredBy?: string;
  trunkId?: string;
}

export class BlindTransfer {
  private readonly record: TransferRecord;
  private accepted = false;
  private lastProgress: number | undefined;
  private guard: unknown;

  constructor(
    private readonly writer: RecordWriter,
    private readonly timers: Timers,
    private readonly log: Logger,
    private readonly leg: SignalingLeg & { refer: NonNullable<SignalingLeg['refer']> },
    private readonly req: TransferRequest,
    private readonly target: TransferTarget,
    requestedBy: TransferRequestedBy,
    private readonly hooks: TransferHooks,
  ) {
    this.record = new TransferRecord(writer, log, req, requestedBy, target, hooks.tell);
  }

  get result(): Promise<TransferResult> {
    return this.record.result;
  }

  get finished(): boolean {
    return this.record.finished;
  }

  /** `transferring` on the record, the target invited, the REFER sent. */
  start(): void {
    this.record.open(this.leg.callId, {}, `transfer:${this.req.transferMode}`);
    this.log.info(
      { requestedBy: this.record.details()?.requestedBy },
      'blind transfer: REFER sent',
    );
    const timeoutMs =
      this.req.secondsToWaitForCallerToAnswer !== undefined
        ? this.req.secondsToWaitForCallerToAnswer * 1000
        : undefined;
    this.guard = this.timers.setTimeout(
      () =>
        this.safely(() =>
          this.onOutcome({ kind: 'no_notify', status: 0, reason: 'no answer from the SIP engine' }),
        ),
      (timeoutMs ?? DEFAULT_REFER_TIMEOUT_MS) + GUARD_SLACK_MS,
    );
    let pending: Promise<ReferOutcome>;
    try {
      pending = this.leg.refer(
        {
          referTo: this.target.referTo,
          ...(this.target.referredBy ? { referredBy: this.target.referredBy } : {}),
        },
        (p) => this.safely(() => this.onProgress(p)),
        timeoutMs,
      );
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (o) => this.safely(() => this.onOutcome(o)),
      (err: unknown) => {
        this.log.warn({ err }, 'REFER failed in the SIP engine');
        this.safely(() => this.onOutcome({ kind: 'refused', status: 0, reason: 'engine_error' }));
      },
    );
  }

  /**
   * The call ended while the transfer was under way (the callee hung up,
   * the hangup API, the agent, a deadline): the attempt is `aborted`.
   * Written before the session's final write, while the record is open.
   */
  abort(): void {
    if (this.finished) return;
    this.finish({ transferringStatus: 'aborted', transferFailedReason: 'call_ended' }, 'cancelled');
  }

  /** The bridged target is gone (the call ended): `left`, with its own media leg's figures. */
  targetLeft(networkQuality: NetworkQuality | undefined): void {
    if (this.record.via === 'bridge') this.record.targetLeft(networkQuality);
  }

  /** The REFER refused, fallbackToBridge asked: the destination dialed as a second leg. */
  private fallBackToBridge(o: ReferOutcome): void {
    this.timers.clearTimeout(this.guard);
    this.record.via = 'bridge';
    this.record.update({
      via: 'bridge',
      ...(o.status > 0 ? { referRefusedStatus: o.status } : {}),
    });
    this.log.info({ sipStatus: o.status }, 'REFER refused: dialing the destination to bridge');
    let pending: Promise<TargetDial>;
    try {
      pending = this.hooks.bridge!();
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (r) => this.safely(() => this.onBridge(r)),
      (err: unknown) => {
        this.log.warn({ err }, 'bridge: the destination was not dialed');
        this.safely(() => this.onBridge({ ok: false, status: 0, reason: 'not_dialed' }));
      },
    );
  }

  private onBridge(r: TargetDial): void {
    if (this.finished) return;
    if (r.ok) {
      this.finish(
        {
          transferringStatus: 'success',
          sipStatus: 200,
          sipReason: 'OK',
          bridge: { callDestinationCallId: r.callId, ...r.leg },
        },
        'joined',
      );
      return;
    }
    this.finish(
      {
        transferringStatus: 'failed',
        transferFailedReason: 'bridge_failed',
        ...(r.status > 0 ? { sipStatus: r.status } : {}),
        sipReason: r.reason,
        ...(r.leg ? { bridge: r.leg } : {}),
      },
      dialOutcomeStatus(r),
    );
  }

  private onProgress(p: ReferProgress): void {
    if (this.finished) return;
    const first = !this.accepted;
    this.accepted = true;
    const ringing = p.status === 180 || p.status === 183;
    this.record.update(
      {
        transferringStatus: 'pending_confirmation',
        ...(first ? { referAcceptedAt: this.writer.now() } : {}),
        ...(p.status > 0 ? { sipStatus: p.status, sipReason: p.reason } : {}),
      },
      ringing ? { status: 'ringing' } : undefined,
    );
    if (first || p.status !== this.lastProgress) {
      this.lastProgress = p.status;
      this.record.tell({
        status: 'pending_confirmation',
        ...(p.status > 0 ? { sipStatus: p.status, sipReason: p.reason } : {}),
      });
    }
  }

  private onOutcome(o: ReferOutcome): void {
    if (this.finished) return;
    const sip =
      o.status > 0 ? { sipStatus: o.status, sipReason: o.reason } : { sipReason: o.reason };
    switch (o.kind) {
      case 'transferred':
        this.finish({ transferringStatus: 'success', ...sip }, 'joined');
        this.hooks.transferred();
        return;
      case 'refused':
        if (this.req.fallbackToBridge && this.hooks.bridge) {
          this.fallBackToBridge(o);
          return;
        }
        this.finish(
          { transferringStatus: 'failed', transferFailedReason: 'refer_refused', ...sip },
          'failed',
        );
        return;
      case 'failed':
        this.finish(
          { transferringStatus: 'failed', transferFailedReason: 'transfer_failed', ...sip },
          targetStatus(o.status),
        );
        return;
      case 'no_notify':
        this.finish(
          { transferringStatus: 'failed', transferFailedReason: 'no_notify', ...sip },
          'unreachable',
        );
        return;
    }
  }

  /** The outcome written; a failed transfer leaves the call `in_call` with its agent. */
  private finish(end: TransferEnding, participant: ParticipantStatus): void {
    this.timers.clearTimeout(this.guard);
    this.record.finish(end, participant, { backInCall: end.transferringStatus === 'failed' });
  }

  /** A throw in a SIP engine callback is logged; the transfer ends as failed so nothing waits forever. */
  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'blind transfer: handler failed');
      this.record.failed('session_error');
    }
  }
}

/** The target's participant status from a final sipfrag (spec §3.2). */
function targetStatus(status: number): ParticipantStatus {
  if (status === 486 || status === 600 || status === 603) return 'rejected';
  if (status === 408 || status === 480 || status === 487) return 'no_answer';
  if (status === 404 || status === 410 || status === 484 || status === 604) return 'unreachable';
  return 'failed';
}

/** The target's participant status after a dial of its own leg that did not answer. */
export function dialOutcomeStatus(r: { status: number; noAnswer?: boolean }): ParticipantStatus {
  return r.noAnswer ? 'no_answer' : r.status > 0 ? targetStatus(r.status) : 'failed';
}
