// The transfers of one call session (issue 24): blind by REFER, by bridging
// when the far end refuses the REFER and the request asks for it, and warm
// or attended by a consult leg the agent talks to before it merges. The
// session owns its record; this keeps the transfer under way and the
// target's leg, and writes through the session's RecordWriter.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { TransferRequestedBy } from '../../model/call-record.js';
import type { SipTrunk } from '../../model/entities.js';
import { CallError } from '../call-error.js';
import { buildDialRequest, numberAtTrunkUri } from '../invite-request.js';
import type { AgentTransferRequest, ConsultAction } from '../ports/agent-link.js';
import type { CallStore } from '../ports/call-store.js';
import type { MediaPort } from '../ports/media-port.js';
import type { ReferProgress, SignalingLeg, SignalingPort } from '../ports/signaling-port.js';
import { optOutRefusal } from '../protections/opt-out-check.js';
import type { Timers } from '../timers.js';
import type { TrunkHealth } from '../trunk-resolution.js';
import {
  numberOfDestination,
  readTransferRequest,
  type TransferBody,
  type TransferRequest,
  type TransferResult,
} from '../transfer/transfer-request.js';
import type { AgentSide } from './agent-side.js';
import { BlindTransfer } from './call-transfer.js';
import { ConsultTransfer, type HandOver } from './consult-transfer.js';
import type { MediaRoutes } from './media-routes.js';
import type { RecordWriter } from './record-writer.js';
import { TargetBridge, type OnAnswer, type TargetDial } from './target-bridge.js';
import { DEFAULT_BRIDGE_WAIT_SECONDS, planTargetLeg, referredByOf } from './transfer-target.js';

/** What the transfers need of their session. */
export interface TransferHost {
  writer: RecordWriter;
  log: Logger;
  store: CallStore;
  clock: Clock;
  timers: Timers;
  signaling: SignalingPort;
  media: MediaPort;
  agentSide: AgentSide;
  /** The callee's leg while the call is connected. */
  connectedLeg(): SignalingLeg | undefined;
  /** Ends the call's attempt (the callee's leg) with this reason. */
  endAttempt(reason: string): void;
  /** Trunks the OPTIONS monitor sees offline (a route's trunk among them is not used). */
  trunkHealth?: TrunkHealth;
  /** Who hears whom in the call (from the answer on). */
  routes(): MediaRoutes | undefined;
  /** The number the current attempt dialed. */
  calleeNumber(): string | undefined;
}

/** Results of transfers refused before they started (the record untouched, the agent not told yet). */
const refusals = new WeakSet<TransferResult>();

/** A transfer refused before it started. */
function refusedResult(req: TransferRequest, reason: string): TransferResult {
  const r: TransferResult = {
    transferringStatus: 'failed',
    transferMode: req.transferMode,
    destination: req.destination,
    transferFailedReason: reason,
  };
  refusals.add(r);
  return r;
}

export class SessionTransfers {
  /** The transfer under way, or the last one. */
  private run: BlindTransfer | ConsultTransfer | undefined;
  /** A transfer by bridging: the target's leg and media (issue 24 item 3). */
  private bridge: TargetBridge | undefined;

  constructor(private readonly host: TransferHost) {}

  /** True while the callee is bridged to a transfer target. */
  get bridged(): boolean {
    return this.bridge?.bridged === true;
  }

  /**
   * Transfers the connected call (issue 24): blind by REFER; resolves with
   * the outcome once the far end has reported it (bounded by the leg's
   * timeout). Throws a CallError when the request cannot be carried out:
   * invalid destination, call not connected, a transfer already under way,
   * destination opted out.
   */
  transfer(body: TransferBody, requestedBy: TransferRequestedBy): Promise<TransferResult> {
    const req = readTransferRequest(body);
    const leg = this.host.connectedLeg();
    const status = this.host.writer.current.status;
    if (this.run && !this.run.finished) {
      throw new CallError('transfer_in_progress', 'A transfer of this call is already under way.');
    }
    if (!leg || status !== 'in_call') {
      throw new CallError('call_not_live', `The call is not connected (${status}).`);
    }
    const rec = this.host.writer.current;
    const number = numberOfDestination(req);
    if (number) {
      const now = this.host.clock.now();
      if (optOutRefusal(this.host.store.optOuts, rec.companyId, number, now, now)) {
        throw new CallError('callee_opted_out', 'The transfer destination asked not to be called.');
      }
    }
    const trunk = rec.sipTrunkId ? this.host.store.sipTrunks.getById(rec.sipTrunkId) : undefined;
    if (req.transferMode !== 'blind') return this.consult(req, requestedBy, trunk, leg.callId);
    if (!leg.refer) return Promise.resolve(refusedResult(req, 'not_supported'));
    if (req.destinationType === 'number' && !trunk) {
      return Promise.resolve(refusedResult(req, 'no_trunk'));
    }
    const referTo =
      req.destinationType === 'number' && trunk
        ? numberAtTrunkUri(trunk, req.destination)
        : req.destination;
    const referredBy = referredByOf(trunk, rec.callerId, req.showCallerId);
    const run = new BlindTransfer(
      this.host.writer,
      this.host.timers,
      this.host.log,
      leg as typeof leg & { refer: NonNullable<typeof leg.refer> },
      req,
      { referTo, ...(referredBy ? { referredBy } : {}), ...(trunk ? { trunkId: trunk.id } : {}) },
      requestedBy,
      {
        tell: (e) => this.host.agentSide.tellTransfer(e),
        transferred: () => this.host.endAttempt('call_transferred'),
        bridge: () => this.dialTarget(trunk, req, 'bridge'),
      },
    );
    this.run = run;
    run.start();
    return run.result;
  }

  /**
   * Warm or attended: the callee held, the destination dialed as a consult
   * leg through the call's trunk (E.164 destinations); the agent talks to it
   * once it answers, then merges or cancels (`act`).
   */
  private consult(
    req: TransferRequest,
    requestedBy: TransferRequestedBy,
    trunk: SipTrunk | undefined,
    callSourceCallId: string,
  ): Promise<TransferResult> {
    const routes = this.host.routes();
    if (req.destinationType !== 'number') {
      return Promise.resolve(refusedResult(req, 'consult_needs_a_number'));
    }
    if (!trunk || !routes) return Promise.resolve(refusedResult(req, 'no_trunk'));
    const run = new ConsultTransfer(
      this.host.writer,
      this.host.log,
      req,
      { trunkId: trunk.id },
      requestedBy,
      routes,
      {
        tell: (e) => this.host.agentSide.tellTransfer(e),
        dial: () => this.dialTarget(trunk, req, 'consult'),
        merge: () => this.bridge?.merge() ?? false,
        release: () => this.endBridge(),
        handOver: (onProgress) => this.handOver(trunk, req, onProgress),
        transferred: () => this.host.endAttempt('call_transferred'),
      },
    );
    this.run = run;
    run.start(callSourceCallId);
    return run.result;
  }

  /** An attended transfer's REFER with Replaces to the callee (consult-transfer.ts). */
  private handOver(
    trunk: SipTrunk,
    req: TransferRequest,
    onProgress: (p: ReferProgress) => void,
  ): HandOver | undefined {
    const leg = this.host.connectedLeg();
    const referTo = this.bridge?.replacesUri();
    if (!leg?.refer || !referTo) return undefined;
    const referredBy = referredByOf(trunk, this.host.writer.current.callerId, req.showCallerId);
    const timeoutMs =
      req.secondsToWaitForCallerToAnswer !== undefined
        ? req.secondsToWaitForCallerToAnswer * 1000
        : undefined;
    return {
      referTo,
      outcome: leg.refer({ referTo, ...(referredBy ? { referredBy } : {}) }, onProgress, timeoutMs),
    };
  }

  /**
   * The agent's or the API's `merge`, `cancel` or `swap` of the consult under
   * way. Throws CallError no_consult_in_progress when there is none (or it
   * cannot do that now).
   */
  act(action: ConsultAction): Promise<TransferResult> {
    const run = this.run;
    if (!(run instanceof ConsultTransfer) || run.finished) {
      return Promise.reject(
        new CallError(
          'no_consult_in_progress',
          'No warm or attended transfer of this call is under way.',
        ),
      );
    }
    try {
      return Promise.resolve(run.act(action));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** The agent's merge, cancel or swap: what cannot apply comes back as a `failed` event. */
  fromAgentConsult(action: ConsultAction): void {
    this.act(action).catch((err: unknown) => {
      const reason = err instanceof CallError ? err.code : 'session_error';
      if (!(err instanceof CallError))
        this.host.log.error({ err, action }, 'consult action failed');
      const req = this.run instanceof ConsultTransfer ? this.run.req : undefined;
      this.host.agentSide.tellTransfer({
        status: 'failed',
        destination: req?.destination ?? '',
        transferMode: req?.transferMode ?? 'warm',
        reason,
      });
    });
  }

  /**
   * The destination dialed as a second leg with its own media, through the
   * outbound route matching its number or else the call's trunk; on answer
   * it is bridged to the callee (a refused REFER's fallback) or consulted
   * by the agent (warm, attended). A failed dial lets go of the target's leg
   * and media before it resolves.
   */
  private async dialTarget(
    callTrunk: SipTrunk | undefined,
    req: TransferRequest,
    onAnswer: OnAnswer,
  ): Promise<TargetDial> {
    const routes = this.host.routes();
    if (!callTrunk || !routes || req.destinationType !== 'number' || this.bridge) {
      return { ok: false, status: 0, reason: 'bridge_not_possible' };
    }
    const rec = this.host.writer.current;
    const plan = planTargetLeg(
      this.host.store,
      this.host.trunkHealth,
      rec,
      callTrunk,
      req,
      this.host.calleeNumber(),
    );
    if (!plan.ok) return { ok: false, status: 0, reason: plan.reason };
    const { trunk, callerId, leg } = plan;
    const bridge = new TargetBridge(
      this.host.signaling,
      this.host.media,
      this.host.timers,
      this.host.log.child({ leg: 'transfer_target' }),
      routes,
      {
        ringing: () => (this.run instanceof ConsultTransfer ? this.run.ringing() : undefined),
        targetEnded: () => this.targetEnded(),
        dialog: (d) => {
          try {
            this.host.store.dialogs.save(rec.id, d, this.host.writer.now(), 'transfer_target');
          } catch (err) {
            this.host.log.error({ err }, 'target dialog not kept: a crash now would leave it');
          }
        },
      },
      () => this.host.writer.now(),
    );
    this.bridge = bridge;
    const r = await bridge.dial(
      (sdp) => buildDialRequest(trunk, req.destination, callerId, sdp),
      1000 * (req.secondsToWaitForCallerToAnswer ?? DEFAULT_BRIDGE_WAIT_SECONDS),
      onAnswer,
      trunk.media ?? 'rtp',
    );
    if (bridge.inviteSentAt) leg.inviteSentAt = bridge.inviteSentAt;
    if (!r.ok && this.bridge === bridge) await this.endBridge();
    return { ...r, leg };
  }

  /**
   * The target hung up: bridged, the call ends as transferred; during a
   * consult, the agent is back with the callee.
   */
  private targetEnded(): void {
    const run = this.run;
    if (run instanceof ConsultTransfer && !run.merged) {
      run
        .targetHungUp()
        .catch((err: unknown) =>
          this.host.log.warn({ err }, 'consult: the target leaving not written'),
        );
      return;
    }
    this.host.endAttempt('call_transferred');
  }

  /** The target let go of: its leg ended, its media closed, its participant `left`. */
  async endBridge(): Promise<void> {
    const bridge = this.bridge;
    if (!bridge) return;
    this.bridge = undefined;
    const quality = await bridge.end();
    try {
      this.host.store.dialogs.remove(this.host.writer.current.id, 'transfer_target');
    } catch (err) {
      this.host.log.warn({ err }, 'ended target dialog not forgotten');
    }
    try {
      this.run?.targetLeft(quality);
    } catch (err) {
      this.host.log.warn({ err }, 'transfer target not written as left');
    }
  }

  /** The agent's `transfer`: refusals come back to it as a `failed` event. */
  fromAgent(request: AgentTransferRequest): void {
    const fail = (reason: string) =>
      this.host.agentSide.tellTransfer({
        status: 'failed',
        destination: request.destination,
        transferMode: request.transferMode ?? 'blind',
        reason,
      });
    try {
      this.transfer(request, 'agent').then(
        (r) => {
          // Refused before it started: the transfer's own events were never sent.
          if (refusals.has(r)) {
            fail(r.transferFailedReason ?? 'failed');
          }
        },
        (err: unknown) => this.host.log.warn({ err }, 'agent transfer failed'),
      );
    } catch (err) {
      const code = err instanceof CallError ? err.code : 'session_error';
      if (!(err instanceof CallError))
        this.host.log.error({ err }, 'agent transfer not carried out');
      fail(code);
    }
  }

  /** The call is ending: a transfer still under way is aborted (before the final write). */
  abort(): void {
    try {
      this.run?.abort();
    } catch (err) {
      this.host.log.warn({ err }, 'aborted transfer not written');
    }
  }
}
