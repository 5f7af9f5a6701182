// One warm or attended transfer (issue 24 item 4): the callee is held (it
// hears silence: nothing is queued on its leg) while the gateway dials the
// destination as a consult leg; once it answers the agent talks to it
// (`consultPhase` consulting_ringing → consulting_dest) and may speak the
// whisper; the agent then merges (callee ⇄ target bridged, the agent leaves:
// `merged`, success), swaps back to the callee and forth (`back_with_caller`),
// or cancels (the target's leg ended, the agent back with the callee:
// `cancelled`). The target failing to answer, or hanging up before the
// merge, also brings the agent back to the callee. Attended and warm are
// carried out alike, by bridging in the gateway.
import type { Logger } from 'pino';
import type { ConsultPhase, NetworkQuality, TransferRequestedBy } from '../../model/call-record.js';
import type { ConsultAction, TransferProgressEvent } from '../ports/agent-link.js';
import type { ReferOutcome, ReferProgress } from '../ports/signaling-port.js';
import { CallError } from '../call-error.js';
import type { TransferRequest, TransferResult } from '../transfer/transfer-request.js';
import { dialOutcomeStatus } from './call-transfer.js';
import type { MediaRoutes } from './media-routes.js';
import type { RecordWriter } from './record-writer.js';
import type { TargetDial } from './target-bridge.js';
import { TransferRecord } from './transfer-record.js';

export interface ConsultHooks {
  tell(event: TransferProgressEvent): void;
  /** Dials the destination as the consult leg; resolves when it answered or could not be reached. */
  dial(): Promise<TargetDial>;
  /** Bridges the answered target to the callee; false when its leg is gone. */
  merge(): boolean;
  /** Lets go of the target's leg and media (its participant `left` with its figures). */
  release(): Promise<void>;
  /**
   * Attended, once merged: a REFER to the callee naming the target with
   * Replaces (RFC 3891), so that the two reach each other directly and the
   * gateway leaves; undefined when the callee's leg cannot REFER or the
   * target's dialog is unknown.
   */
  handOver?(onProgress: (p: ReferProgress) => void): HandOver | undefined;
  /** The callee and the target reached each other: end our legs, `call_transferred`. */
  transferred(): void;
}

/** A REFER with Replaces under way. */
export interface HandOver {
  referTo: string;
  outcome: Promise<ReferOutcome>;
}

/** Phases in which the target's leg is up or ringing and the consult may be ended. */
const OPEN_PHASES: ReadonlySet<ConsultPhase> = new Set([
  'consulting_ringing',
  'consulting_dest',
  'back_with_caller',
]);

export class ConsultTransfer {
  private readonly record: TransferRecord;
  private phase: ConsultPhase = 'idle';

  constructor(
    private readonly writer: RecordWriter,
    private readonly log: Logger,
    readonly req: TransferRequest,
    target: { trunkId?: string },
    requestedBy: TransferRequestedBy,
    private readonly routes: MediaRoutes,
    private readonly hooks: ConsultHooks,
  ) {
    this.record = new TransferRecord(writer, log, req, requestedBy, target, hooks.tell);
    this.record.via = 'bridge';
  }

  /** Answered when the target was reached (pending_confirmation) or the consult ended. */
  get result(): Promise<TransferResult> {
    return this.record.result;
  }

  get finished(): boolean {
    return this.record.finished;
  }

  /** True once merged: the callee and the target hear each other. */
  get merged(): boolean {
    return this.phase === 'merged';
  }

  /** `transferring`, the callee held, the destination dialed. */
  start(callSourceCallId: string): void {
    this.phase = 'consulting_ringing';
    this.record.open(
      callSourceCallId,
      { consultPhase: this.phase, via: 'bridge' },
      `transfer:${this.req.transferMode}`,
    );
    this.routes.agentTo('nobody');
    this.log.info({ transferMode: this.req.transferMode }, 'consult transfer: dialing the target');
    let pending: Promise<TargetDial>;
    try {
      pending = this.hooks.dial();
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (r) => this.safely(() => this.onDial(r)),
      (err: unknown) => {
        this.log.warn({ err }, 'consult: the destination was not dialed');
        this.safely(() => this.onDial({ ok: false, status: 0, reason: 'not_dialed' }));
      },
    );
  }

  /** The target's phone rings. */
  ringing(): void {
    if (this.phase === 'consulting_ringing') this.record.update({}, { status: 'ringing' });
  }

  /** The agent's (or the API's) merge, cancel or swap. Throws a CallError when it cannot apply. */
  act(action: ConsultAction): Promise<TransferResult> | TransferResult {
    switch (action) {
      case 'merge':
        return this.merge();
      case 'cancel':
        return this.cancel();
      case 'swap':
        return this.swap();
    }
  }

  /** The target hung up (or its leg failed) before the merge: the agent is back with the callee. */
  targetHungUp(): Promise<void> {
    if (this.finished || !OPEN_PHASES.has(this.phase)) return Promise.resolve();
    this.routes.agentTo('callee');
    return this.hooks
      .release()
      .then(() => this.end('failed', 'target_hung_up', 'back_with_caller', 'left'));
  }

  /** The call ended during the consult: `aborted` (the target's leg is let go of by the session). */
  abort(): void {
    if (this.finished) return;
    const joined = this.phase === 'consulting_dest' || this.phase === 'back_with_caller';
    this.finishWith('aborted', 'call_ended', this.phase, joined ? 'joined' : 'cancelled', false);
  }

  /** The consulted target is gone (the call ended): `left`, with its media figures. */
  targetLeft(networkQuality: NetworkQuality | undefined): void {
    this.record.targetLeft(networkQuality);
  }

  private onDial(r: TargetDial): void {
    if (this.finished || this.phase !== 'consulting_ringing') return;
    if (!r.ok) {
      this.routes.agentTo('callee');
      this.record.finish(
        {
          transferringStatus: 'failed',
          transferFailedReason: 'consult_failed',
          ...(r.status > 0 ? { sipStatus: r.status } : {}),
          sipReason: r.reason,
          ...(r.leg ? { bridge: r.leg } : {}),
        },
        dialOutcomeStatus(r),
        { backInCall: true, details: { consultPhase: 'back_with_caller' } },
      );
      this.phase = 'back_with_caller';
      return;
    }
    this.phase = 'consulting_dest';
    const at = this.writer.now();
    this.record.update(
      {
        transferringStatus: 'pending_confirmation',
        consultPhase: this.phase,
        callDestinationCallId: r.callId,
        ...r.leg,
        sipStatus: 200,
        sipReason: 'OK',
      },
      { status: 'joined', joinedAt: at },
    );
    this.record.tell({
      status: 'pending_confirmation',
      consultPhase: this.phase,
      sipStatus: 200,
      sipReason: 'OK',
      ...(this.req.messageToPersonWantingToBeTransferred !== undefined
        ? { messageToPersonWantingToBeTransferred: this.req.messageToPersonWantingToBeTransferred }
        : {}),
      ...(this.req.announceTransferReason && this.req.transferReason !== undefined
        ? { transferReason: this.req.transferReason }
        : {}),
    });
    this.record.settle({
      transferringStatus: 'pending_confirmation',
      consultPhase: this.phase,
      via: 'bridge',
      sipStatus: 200,
      sipReason: 'OK',
    });
    this.log.info('consult transfer: the target answered, the agent consults it');
  }

  private merge(): TransferResult {
    if (this.phase !== 'consulting_dest' && this.phase !== 'back_with_caller') {
      throw this.notNow('merge');
    }
    if (!this.hooks.merge()) throw new CallError('no_consult_in_progress', 'The target has left.');
    this.end('success', undefined, 'merged', 'joined');
    if (this.req.transferMode === 'attended') this.handOver();
    return this.resultNow();
  }

  /**
   * Attended (RFC 5589 §7): bridged in the gateway at once, then a REFER
   * with Replaces asks the callee to call the target itself. A 2xx sipfrag:
   * both our legs end (`via: refer`); anything else: the gateway's bridge
   * stays (the refusal kept on the details).
   */
  private handOver(): void {
    let accepted = false;
    let h: HandOver | undefined;
    try {
      h = this.hooks.handOver?.((p) =>
        this.safely(() => {
          if (accepted || p.status <= 0) return;
          accepted = true;
          this.record.amend({ referAcceptedAt: this.writer.now() }, {});
        }),
      );
    } catch (err) {
      this.log.warn({ err }, 'attended transfer: REFER with Replaces not sent');
    }
    if (!h) return;
    this.record.amend({ referTo: h.referTo }, {});
    this.log.info('attended transfer: REFER with Replaces sent');
    h.outcome.then(
      (o) =>
        this.safely(() => {
          if (o.kind === 'transferred') {
            this.record.amend(
              { via: 'refer', sipStatus: o.status, sipReason: o.reason },
              { via: 'refer', sipStatus: o.status, sipReason: o.reason },
            );
            this.log.info('attended transfer: the callee reached the target itself');
            this.hooks.transferred();
            return;
          }
          this.record.amend({ referRefusedStatus: o.status }, {});
          this.log.info(
            { outcome: o.kind, sipStatus: o.status },
            'attended transfer: REFER with Replaces not carried out; the gateway keeps the bridge',
          );
        }),
      (err: unknown) => this.log.warn({ err }, 'attended transfer: REFER failed in the SIP engine'),
    );
  }

  private async cancel(): Promise<TransferResult> {
    if (!OPEN_PHASES.has(this.phase) || this.finished) throw this.notNow('cancel');
    const ringing = this.phase === 'consulting_ringing';
    this.phase = 'cancelled';
    this.routes.agentTo('callee');
    await this.hooks.release();
    this.end('aborted', 'cancelled', 'cancelled', ringing ? 'cancelled' : 'left');
    return this.resultNow();
  }

  private swap(): TransferResult {
    if (this.phase !== 'consulting_dest' && this.phase !== 'back_with_caller') {
      throw this.notNow('swap');
    }
    this.phase = this.phase === 'consulting_dest' ? 'back_with_caller' : 'consulting_dest';
    this.routes.agentTo(this.phase === 'consulting_dest' ? 'target' : 'callee');
    this.record.update({ consultPhase: this.phase });
    this.record.tell({ status: 'pending_confirmation', consultPhase: this.phase });
    return {
      transferringStatus: 'pending_confirmation',
      transferMode: this.req.transferMode,
      destination: this.req.destination,
      consultPhase: this.phase,
      via: 'bridge',
    };
  }

  private end(
    status: 'success' | 'failed' | 'aborted',
    reason: string | undefined,
    phase: ConsultPhase,
    participant: 'joined' | 'left' | 'cancelled',
  ): void {
    // Merged: the call stays `transferring` (live) until either party hangs up.
    this.finishWith(status, reason, phase, participant, status !== 'success');
  }

  private finishWith(
    status: 'success' | 'failed' | 'aborted',
    reason: string | undefined,
    phase: ConsultPhase,
    participant: 'joined' | 'left' | 'cancelled',
    backInCall: boolean,
  ): void {
    this.phase = phase;
    this.record.finish(
      { transferringStatus: status, ...(reason ? { transferFailedReason: reason } : {}) },
      participant,
      { backInCall, details: { consultPhase: phase } },
    );
  }

  private resultNow(): TransferResult {
    return {
      transferringStatus: this.phase === 'merged' ? 'success' : 'aborted',
      transferMode: this.req.transferMode,
      destination: this.req.destination,
      consultPhase: this.phase,
      via: 'bridge',
    };
  }

  private notNow(action: ConsultAction): CallError {
    return new CallError(
      'no_consult_in_progress',
      `No consult of this call can ${action} now (consultPhase ${this.phase}).`,
    );
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'consult transfer: handler failed');
      this.record.failed('session_error');
    }
  }
}
