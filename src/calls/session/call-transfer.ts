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
  TransferAttempt,
  TransferringDetails,
  TransferRequestedBy,
} from '../../model/call-record.js';
import type { TransferProgressEvent } from '../ports/agent-link.js';
import type { ReferOutcome, ReferProgress, SignalingLeg } from '../ports/signaling-port.js';
import type { Timers } from '../timers.js';
import type { TransferRequest, TransferResult } from '../transfer/transfer-request.js';
import type { RecordWriter } from './record-writer.js';
import type { BridgeDialResult } from './target-bridge.js';

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
  bridge?(): Promise<BridgeDialResult & { inviteSentAt?: string }>;
}

export interface TransferTarget {
  referTo: string;
  referredBy?: string;
  trunkId?: string;
}

type Ending = Pick<TransferResult, 'transferringStatus' | 'transferFailedReason'> & {
  sipStatus?: number;
  sipReason?: string;
  /** Carried out (or tried) by bridging: what the details keep of the target's leg. */
  bridge?: { callDestinationCallId?: string; inviteSentAt?: string };
};

export class BlindTransfer {
  readonly result: Promise<TransferResult>;
  private resolve!: (r: TransferResult) => void;
  private finishedWith: TransferResult | undefined;
  private participant = -1;
  private readonly startedAt: string;
  private accepted = false;
  private lastProgress: number | undefined;
  private guard: unknown;
  /** The REFER was refused and the destination is dialed / bridged instead. */
  private bridging = false;

  constructor(
    private readonly writer: RecordWriter,
    private readonly timers: Timers,
    private readonly log: Logger,
    private readonly leg: SignalingLeg & { refer: NonNullable<SignalingLeg['refer']> },
    private readonly req: TransferRequest,
    private readonly target: TransferTarget,
    private readonly requestedBy: TransferRequestedBy,
    private readonly hooks: TransferHooks,
  ) {
    this.result = new Promise((r) => (this.resolve = r));
    this.startedAt = writer.now();
  }

  get finished(): boolean {
    return this.finishedWith !== undefined;
  }

  /** `transferring` on the record, the target invited, the REFER sent. */
  start(): void {
    const r = this.writer.current;
    const details: TransferringDetails = {
      callSourceId: r.id,
      callSourceCallId: this.leg.callId,
      transferringStatus: 'transferring',
      callerId: r.callerId,
      destinationType: 'External',
      destinationNumber: this.req.destination,
      transferMode: this.req.transferMode,
      ...(this.req.transferReason !== undefined ? { transferReason: this.req.transferReason } : {}),
      ...(this.req.announceTransferReason !== undefined
        ? { announceTransferReason: this.req.announceTransferReason }
        : {}),
      showCallerId: this.req.showCallerId,
      ...(this.req.secondsToWaitForCallerToAnswer !== undefined
        ? { secondsToWaitForCallerToAnswer: this.req.secondsToWaitForCallerToAnswer }
        : {}),
      ...(this.req.messageToPersonWantingToBeTransferred !== undefined
        ? { messageToPersonWantingToBeTransferred: this.req.messageToPersonWantingToBeTransferred }
        : {}),
      ...(this.target.trunkId ? { outboundTrunkId: this.target.trunkId } : {}),
      referTo: this.target.referTo,
      requestedBy: this.requestedBy,
      startedAt: this.startedAt,
    };
    const participants = [
      ...r.participants,
      {
        type: 'transfer' as const,
        role: 'User' as const,
        status: 'invited' as const,
        deviceKind: 'sip' as const,
        invitedAt: this.startedAt,
        ...(this.req.destinationType === 'number' ? { phoneNumber: this.req.destination } : {}),
        initiator: false,
      },
    ];
    this.participant = participants.length - 1;
    this.writer.status(
      'transferring',
      { transferringDetails: details, participants },
      `transfer:${this.req.transferMode}`,
      ['in_call'],
    );
    this.tell({ status: 'transferring' });
    this.log.info(
      { referTo: this.target.referTo, requestedBy: this.requestedBy },
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

  /**
   * The bridged target is gone (the call ended): `left`, with its own media
   * leg's figures. Only after a bridge the target joined.
   */
  targetLeft(networkQuality: NetworkQuality | undefined): void {
    const p = this.writer.current.participants[this.participant];
    if (!this.bridging || p?.status !== 'joined') return;
    this.writer.write(
      this.writer.participantPatch(this.participant, {
        status: 'left',
        leftAt: this.writer.now(),
        ...(networkQuality ? { networkQuality } : {}),
      }),
    );
  }

  /** The REFER refused, fallbackToBridge asked: the destination dialed as a second leg. */
  private fallBackToBridge(o: ReferOutcome): void {
    this.timers.clearTimeout(this.guard);
    this.bridging = true;
    const details = this.writer.current.transferringDetails;
    if (details) {
      this.writer.write({
        transferringDetails: {
          ...details,
          via: 'bridge',
          ...(o.status > 0 ? { referRefusedStatus: o.status } : {}),
        },
      });
    }
    this.log.info({ sipStatus: o.status }, 'REFER refused: dialing the destination to bridge');
    let pending: Promise<BridgeDialResult & { inviteSentAt?: string }>;
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

  private onBridge(r: BridgeDialResult & { inviteSentAt?: string }): void {
    if (this.finished) return;
    const inviteSentAt = r.inviteSentAt ? { inviteSentAt: r.inviteSentAt } : {};
    if (r.ok) {
      this.finish(
        {
          transferringStatus: 'success',
          sipStatus: 200,
          sipReason: 'OK',
          bridge: { callDestinationCallId: r.callId, ...inviteSentAt },
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
        bridge: inviteSentAt,
      },
      r.noAnswer ? 'no_answer' : r.status > 0 ? targetStatus(r.status) : 'failed',
    );
  }

  private onProgress(p: ReferProgress): void {
    if (this.finished) return;
    const first = !this.accepted;
    this.accepted = true;
    const at = this.writer.now();
    const details = this.writer.current.transferringDetails;
    if (details) {
      const ringing = p.status === 180 || p.status === 183;
      this.writer.write({
        transferringDetails: {
          ...details,
          transferringStatus: 'pending_confirmation',
          ...(first ? { referAcceptedAt: at } : {}),
          ...(p.status > 0 ? { sipStatus: p.status, sipReason: p.reason } : {}),
        },
        ...(ringing ? this.writer.participantPatch(this.participant, { status: 'ringing' }) : {}),
      });
    }
    if (first || p.status !== this.lastProgress) {
      this.lastProgress = p.status;
      this.tell({
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

  /**
   * One write: the details' final state, the attempt appended, the target's
   * status, and (when the call stays up) `in_call` again.
   */
  private finish(end: Ending, participant: ParticipantStatus): void {
    this.timers.clearTimeout(this.guard);
    const at = this.writer.now();
    const result: TransferResult = {
      transferringStatus: end.transferringStatus,
      transferMode: this.req.transferMode,
      destination: this.req.destination,
      referTo: this.target.referTo,
      ...(end.transferFailedReason ? { transferFailedReason: end.transferFailedReason } : {}),
      ...(end.sipStatus !== undefined ? { sipStatus: end.sipStatus } : {}),
      ...(end.sipReason !== undefined ? { sipReason: end.sipReason } : {}),
      ...(this.bridging ? { via: 'bridge' as const } : {}),
    };
    this.finishedWith = result;
    const r = this.writer.current;
    const details = r.transferringDetails;
    const attempt: TransferAttempt = {
      status: end.transferringStatus,
      at,
      destinationNumber: this.req.destination,
      destinationType: 'External',
      ...(this.req.transferReason !== undefined ? { transferReason: this.req.transferReason } : {}),
      ...(end.transferFailedReason ? { transferFailedReason: end.transferFailedReason } : {}),
      transferMode: this.req.transferMode,
      requestedBy: this.requestedBy,
      startedAt: this.startedAt,
      endedAt: at,
      ...(end.sipStatus !== undefined ? { sipStatus: end.sipStatus } : {}),
      ...(end.sipReason !== undefined ? { sipReason: end.sipReason } : {}),
      ...(this.bridging ? { via: 'bridge' as const } : {}),
    };
    const patch = {
      ...(details
        ? {
            transferringDetails: {
              ...details,
              transferringStatus: end.transferringStatus,
              endedAt: at,
              ...(end.transferFailedReason
                ? { transferFailedReason: end.transferFailedReason }
                : {}),
              ...(end.sipStatus !== undefined ? { sipStatus: end.sipStatus } : {}),
              ...(end.sipReason !== undefined ? { sipReason: end.sipReason } : {}),
              ...(end.bridge?.callDestinationCallId
                ? { callDestinationCallId: end.bridge.callDestinationCallId }
                : {}),
              ...(end.bridge?.inviteSentAt ? { inviteSentAt: end.bridge.inviteSentAt } : {}),
            },
          }
        : {}),
      transferAttempts: [...(r.transferAttempts ?? []), attempt],
      ...this.writer.participantPatch(this.participant, {
        status: participant,
        ...(participant === 'joined' ? { joinedAt: at } : {}),
      }),
    };
    try {
      if (end.transferringStatus === 'failed') {
        this.writer.status('in_call', patch, `transfer_failed:${end.transferFailedReason}`, [
          'transferring',
        ]);
      } else this.writer.write(patch);
    } finally {
      this.log.info(
        {
          outcome: end.transferringStatus,
          reason: end.transferFailedReason,
          sipStatus: end.sipStatus,
        },
        'blind transfer finished',
      );
      this.tell({
        status: end.transferringStatus,
        ...(end.transferFailedReason ? { reason: end.transferFailedReason } : {}),
        ...(end.sipStatus !== undefined ? { sipStatus: end.sipStatus } : {}),
        ...(end.sipReason !== undefined ? { sipReason: end.sipReason } : {}),
      });
      this.resolve(result);
    }
  }

  private tell(e: Omit<TransferProgressEvent, 'destination' | 'transferMode'>): void {
    try {
      this.hooks.tell({
        ...e,
        destination: this.req.destination,
        transferMode: this.req.transferMode,
      });
    } catch (err) {
      this.log.warn({ err }, 'agent not told of the transfer');
    }
  }

  /** A throw in a SIP engine callback is logged; the transfer ends as failed so nothing waits forever. */
  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'blind transfer: handler failed');
      if (!this.finishedWith) {
        this.finishedWith = {
          transferringStatus: 'failed',
          transferMode: this.req.transferMode,
          destination: this.req.destination,
          transferFailedReason: 'session_error',
        };
        this.resolve(this.finishedWith);
      }
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
