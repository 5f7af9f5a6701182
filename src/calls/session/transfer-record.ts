// What one transfer attempt writes on its call's record (spec §2.5, §3.3),
// through the session's writer: `transferring` with `transferringDetails`
// and a `transfer` participant when it opens, progress on the details, and
// once finished the attempt appended to `transferAttempts` with the details'
// final state (and `in_call` again when the call stays with its agent). The
// agent hears each step as a `transfer` event. Blind (call-transfer.ts) and
// consult (consult-transfer.ts) transfers both write through this.
import type { Logger } from 'pino';
import type {
  NetworkQuality,
  ParticipantStatus,
  TransferAttempt,
  TransferringDetails,
  TransferRequestedBy,
} from '../../model/call-record.js';
import type { TransferProgressEvent } from '../ports/agent-link.js';
import type { TransferRequest, TransferResult } from '../transfer/transfer-request.js';
import type { RecordWriter } from './record-writer.js';

/** The details of a target's own leg (a transfer by bridging). */
export type TargetLegDetails = Partial<
  Pick<
    TransferringDetails,
    'callDestinationCallId' | 'inviteSentAt' | 'outboundTrunkId' | 'routedVia' | 'outboundRouteId'
  >
>;

export type TransferEnding = Pick<TransferResult, 'transferFailedReason'> & {
  transferringStatus: 'success' | 'failed' | 'aborted';
  sipStatus?: number;
  sipReason?: string;
  /** What the details keep of the target's own leg (transfer by bridging). */
  bridge?: TargetLegDetails;
};

/** The agent's event without what every event of this transfer carries. */
export type TransferTell = Omit<TransferProgressEvent, 'destination' | 'transferMode'>;

export class TransferRecord {
  readonly result: Promise<TransferResult>;
  private resolve!: (r: TransferResult) => void;
  private settledWith: TransferResult | undefined;
  private ended = false;
  private participant = -1;
  readonly startedAt: string;
  /** Carried out (or tried) by dialing the destination and bridging. */
  via: 'refer' | 'bridge' | undefined;

  constructor(
    private readonly writer: RecordWriter,
    private readonly log: Logger,
    private readonly req: TransferRequest,
    private readonly requestedBy: TransferRequestedBy,
    private readonly target: { referTo?: string; trunkId?: string },
    private readonly tellAgent: (e: TransferProgressEvent) => void,
  ) {
    this.result = new Promise((r) => (this.resolve = r));
    this.startedAt = writer.now();
  }

  /** The attempt is over (its outcome written). */
  get finished(): boolean {
    return this.ended;
  }

  /** The caller's answer was given (it may come before the end: a consult's pending_confirmation). */
  get answered(): boolean {
    return this.settledWith !== undefined;
  }

  /** `transferring` on the record, the details and the target's participant written; the agent told. */
  open(callSourceCallId: string, extra: Partial<TransferringDetails>, label: string): void {
    const r = this.writer.current;
    const q = this.req;
    const details: TransferringDetails = {
      callSourceId: r.id,
      callSourceCallId,
      transferringStatus: 'transferring',
      callerId: r.callerId,
      destinationType: 'External',
      destinationNumber: q.destination,
      transferMode: q.transferMode,
      ...(q.transferReason !== undefined ? { transferReason: q.transferReason } : {}),
      ...(q.announceTransferReason !== undefined
        ? { announceTransferReason: q.announceTransferReason }
        : {}),
      showCallerId: q.showCallerId,
      ...(q.secondsToWaitForCallerToAnswer !== undefined
        ? { secondsToWaitForCallerToAnswer: q.secondsToWaitForCallerToAnswer }
        : {}),
      ...(q.messageToPersonWantingToBeTransferred !== undefined
        ? { messageToPersonWantingToBeTransferred: q.messageToPersonWantingToBeTransferred }
        : {}),
      ...(this.target.trunkId ? { outboundTrunkId: this.target.trunkId } : {}),
      ...(this.target.referTo ? { referTo: this.target.referTo } : {}),
      requestedBy: this.requestedBy,
      startedAt: this.startedAt,
      ...extra,
    };
    const participants = [
      ...r.participants,
      {
        type: 'transfer' as const,
        role: 'User' as const,
        status: 'invited' as const,
        deviceKind: 'sip' as const,
        invitedAt: this.startedAt,
        ...(q.destinationType === 'number' ? { phoneNumber: q.destination } : {}),
        initiator: false,
      },
    ];
    this.participant = participants.length - 1;
    this.writer.status('transferring', { transferringDetails: details, participants }, label, [
      'in_call',
    ]);
    this.tell({ status: 'transferring' });
  }

  /** The details changed (progress), and the target's participant with them when given. */
  update(
    details: Partial<TransferringDetails>,
    participant?: { status: ParticipantStatus; joinedAt?: string },
  ): void {
    const current = this.writer.current.transferringDetails;
    if (!current) return;
    this.writer.write({
      transferringDetails: { ...current, ...details },
      ...(participant ? this.writer.participantPatch(this.participant, participant) : {}),
    });
  }

  /**
   * After the end: what happened next to a finished attempt (an attended
   * transfer's hand-over by REFER), on its details and its attempt entry.
   */
  amend(details: Partial<TransferringDetails>, attempt: Partial<TransferAttempt>): void {
    const r = this.writer.current;
    const current = r.transferringDetails;
    const attempts = r.transferAttempts ?? [];
    const last = attempts.at(-1);
    if (!current || !last) return;
    this.writer.write({
      transferringDetails: { ...current, ...details },
      transferAttempts: [...attempts.slice(0, -1), { ...last, ...attempt }],
    });
  }

  /** The details as they stand. */
  details(): TransferringDetails | undefined {
    return this.writer.current.transferringDetails;
  }

  /** Answers the caller before the end (a consult reached the target). */
  settle(result: Omit<TransferResult, 'transferMode' | 'destination'>): void {
    if (this.settledWith) return;
    this.settledWith = {
      ...result,
      transferMode: this.req.transferMode,
      destination: this.req.destination,
    };
    this.resolve(this.settledWith);
  }

  /**
   * One write: the details' final state, the attempt appended, the target's
   * status, and (failed, aborted with the call up) `in_call` again. Then the
   * agent is told and the caller answered (unless it was already).
   */
  finish(
    end: TransferEnding,
    participant: ParticipantStatus,
    opts: { backInCall: boolean; details?: Partial<TransferringDetails> },
  ): void {
    if (this.ended) return;
    this.ended = true;
    const at = this.writer.now();
    const sip = {
      ...(end.sipStatus !== undefined ? { sipStatus: end.sipStatus } : {}),
      ...(end.sipReason !== undefined ? { sipReason: end.sipReason } : {}),
    };
    const reason = end.transferFailedReason
      ? { transferFailedReason: end.transferFailedReason }
      : {};
    const via = this.via ? { via: this.via } : {};
    const r = this.writer.current;
    const details = r.transferringDetails;
    const consultPhase = opts.details?.consultPhase ?? details?.consultPhase;
    const attempt: TransferAttempt = {
      status: end.transferringStatus,
      at,
      destinationNumber: this.req.destination,
      destinationType: 'External',
      ...(this.req.transferReason !== undefined ? { transferReason: this.req.transferReason } : {}),
      ...reason,
      transferMode: this.req.transferMode,
      requestedBy: this.requestedBy,
      startedAt: this.startedAt,
      endedAt: at,
      ...sip,
      ...via,
      ...(consultPhase ? { consultPhase } : {}),
    };
    const patch = {
      ...(details
        ? {
            transferringDetails: {
              ...details,
              ...opts.details,
              transferringStatus: end.transferringStatus,
              endedAt: at,
              ...reason,
              ...sip,
              ...end.bridge,
            },
          }
        : {}),
      transferAttempts: [...(r.transferAttempts ?? []), attempt],
      ...this.writer.participantPatch(this.participant, {
        status: participant,
        ...(participant === 'joined' ? { joinedAt: at } : {}),
        ...(participant === 'left' ? { leftAt: at } : {}),
      }),
    };
    try {
      if (opts.backInCall) {
        this.writer.status(
          'in_call',
          patch,
          `transfer_${end.transferringStatus}:${end.transferFailedReason}`,
          ['transferring'],
        );
      } else this.writer.write(patch);
    } finally {
      this.log.info(
        {
          outcome: end.transferringStatus,
          reason: end.transferFailedReason,
          sipStatus: end.sipStatus,
          transferMode: this.req.transferMode,
        },
        'transfer finished',
      );
      this.tell({
        status: end.transferringStatus,
        ...(end.transferFailedReason ? { reason: end.transferFailedReason } : {}),
        ...sip,
        ...(consultPhase ? { consultPhase } : {}),
      });
      this.settle({
        transferringStatus: end.transferringStatus,
        ...reason,
        ...sip,
        ...(this.target.referTo ? { referTo: this.target.referTo } : {}),
        ...via,
        ...(consultPhase ? { consultPhase } : {}),
      });
    }
  }

  /**
   * The bridged target is gone (the call ended): `left`, with its own media
   * leg's figures. Only a target that had joined.
   */
  targetLeft(networkQuality: NetworkQuality | undefined): void {
    const p = this.writer.current.participants[this.participant];
    if (p?.status !== 'joined') return;
    this.writer.write(
      this.writer.participantPatch(this.participant, {
        status: 'left',
        leftAt: this.writer.now(),
        ...(networkQuality ? { networkQuality } : {}),
      }),
    );
  }

  /** A handler threw: the caller is answered `failed` so nothing waits forever. */
  failed(reason: string): void {
    if (!this.settledWith)
      this.settle({ transferringStatus: 'failed', transferFailedReason: reason });
  }

  tell(e: TransferTell): void {
    try {
      this.tellAgent({
        ...e,
        destination: this.req.destination,
        transferMode: this.req.transferMode,
      });
    } catch (err) {
      this.log.warn({ err }, 'agent not told of the transfer');
    }
  }
}
