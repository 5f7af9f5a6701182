// One dial round of a call, from claim to the round's end: every number of
// the round (the primary, then the alternates after a failed attempt, or the
// number a callback is for) passes the dial gate, is dialed or skipped, and
// the round ends final or with the next round scheduled. The session is the
// only writer of its record (docs/decisions/dial-path.md); it owns the
// deadlines, and ends its record and releases its media on every path,
// exceptions included.
import type { ConsultAction } from '../ports/agent-link.js';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type {
  CallRecord,
  EndedBy,
  SkippedAttempt,
  TransferRequestedBy,
} from '../../model/call-record.js';
import { OPEN_STATUSES, PRE_DIAL_STATUSES, type CallStatus } from '../../model/call-status.js';
import type { Agent, SipTrunk } from '../../model/entities.js';
import { buildDialRequest } from '../invite-request.js';
import type { AgentLinkFactory } from '../ports/agent-link.js';
import type { CallStore } from '../ports/call-store.js';
import type { MediaLeg, MediaPort } from '../ports/media-port.js';
import type { SignalingPort } from '../ports/signaling-port.js';
import type { DialPurpose } from '../protections/dial-gate.js';
import type { DestinationZones } from '../protections/destination-zones.js';
import type { RetryPolicy } from '../scheduling/retry-policy.js';
import type { Timers } from '../timers.js';
import type { TrunkHealth } from '../trunk-resolution.js';
import type { TransferBody, TransferResult } from '../transfer/transfer-request.js';
import { SessionTransfers } from './session-transfers.js';
import { MediaRoutes, type RelayLatency } from './media-routes.js';
import { AgentSide } from './agent-side.js';
import { CallAttempt, type AttemptOutcome } from './call-attempt.js';
import { dialTimeLimit } from './dial-time-limit.js';
import { RecordWriter } from './record-writer.js';
import { callDuration, closeRound } from './round-closing.js';
import { round6 } from './agent-reports.js';
import {
  intoCallingRules,
  numbersOfRound,
  pickNumber,
  writeDeferral,
  writeRoundEnd,
  writeForcedEnd,
  writeSessionError,
} from './round-writes.js';
import { SessionClock, type SessionPhase } from './session-clock.js';

export interface CallSessionDeps {
  store: CallStore;
  clock: Clock;
  timers: Timers;
  signaling: SignalingPort;
  media: MediaPort;
  log: Logger;
  settings: {
    defaultRingTimeoutSeconds: number;
    defaultMaxDurationSeconds: number;
    stuckAfterSeconds: number;
    /** RTP silence after which an answered call's far end is asked if it is still there
     *  (rtp.inactivitySeconds; 0 or absent: never). */
    mediaInactivitySeconds?: number;
  };
  /** Zones and country of a number (the gate judges each number in its own). */
  zones: (e164: string) => Promise<DestinationZones>;
  /** Plans retries and callbacks when a round ends. */
  retries?: RetryPolicy;
  /** Trunks the OPTIONS monitor sees as offline are not dialed (voip_phone_offline). */
  trunkHealth?: TrunkHealth;
  /** Told when the next round was scheduled (the scheduler polls at once). */
  onScheduled?: () => void;
  /** Bridges answered calls to their AI agent (none: the call runs without one). */
  agents?: AgentLinkFactory;
  /** Where a bridged transfer's relayed frames record their latency (/metrics). */
  relayLatency?: RelayLatency;
}

/** Outcomes after which the round's next number is tried. */
const TRY_NEXT = new Set(['busy', 'missed', 'failed']);

const MEDIA_CLOSE_TIMEOUT_MS = 2000;

export class CallSession {
  private readonly writer: RecordWriter;
  private readonly log: Logger;
  private readonly agentSide: AgentSide;
  readonly clock: SessionClock;
  private attempt: CallAttempt | undefined;
  private media: MediaLeg | undefined;
  /** Who hears whom from the answer on (the agent, the callee, a transfer target). */
  private routes: MediaRoutes | undefined;
  /** Transfers of this call (blind by REFER, by bridging). */
  private readonly transfers: SessionTransfers;
  private claimed = false;
  /** The attempt being dialed (index in the record's attempts). */
  private attemptIndex: number | undefined;
  private stopCause: EndedBy | undefined;
  private forced = false;
  /** A dialog of this session is kept in the store (for a BYE after a crash). */
  private dialogKept = false;
  readonly done: Promise<CallRecord>;
  private resolveDone!: (r: CallRecord) => void;

  constructor(
    record: CallRecord,
    private readonly deps: CallSessionDeps,
    /** The scheduler's key for this dial (kept on the attempt). */
    private readonly idempotencyKey?: string,
  ) {
    this.writer = new RecordWriter(deps.store.calls, deps.clock, record);
    this.log = deps.log.child({ callId: record.callId });
    this.agentSide = new AgentSide(this.writer, deps.store.optOuts, deps.clock, this.log);
    this.clock = new SessionClock(deps.clock, deps.settings.stuckAfterSeconds * 1000);
    this.transfers = new SessionTransfers({
      writer: this.writer,
      log: this.log,
      store: deps.store,
      clock: deps.clock,
      timers: deps.timers,
      signaling: deps.signaling,
      media: deps.media,
      agentSide: this.agentSide,
      connectedLeg: () => this.attempt?.connectedLeg,
      endAttempt: (reason) => this.attempt?.end(reason),
      routes: () => this.routes,
      ...(deps.trunkHealth ? { trunkHealth: deps.trunkHealth } : {}),
      calleeNumber: () =>
        this.attemptIndex !== undefined
          ? this.writer.current.attempts?.[this.attemptIndex]?.number
          : undefined,
    });
    this.done = new Promise((r) => (this.resolveDone = r));
  }

  get recordId(): string {
    return this.writer.current.id;
  }

  get phase(): SessionPhase {
    return this.clock.phase;
  }

  /** Ends the call from our side: the hangup API, shutdown or the watchdog. */
  stop(cause: 'api' | 'shutdown' | 'watchdog'): void {
    this.stopCause ??= cause;
    this.attempt?.end(cause === 'watchdog' ? 'call_stuck' : 'user_hungup');
  }

  /**
   * The record final now, whatever the session is waiting for (drain past
   * its grace, a watchdog's second strike). The session's later writes find
   * a final record and change nothing.
   */
  forceFinish(cause: 'shutdown' | 'watchdog'): void {
    if (this.forced) return;
    this.forced = true;
    this.stopCause ??= cause;
    // A transfer under way ends as aborted while the record is still open: a final
    // record never says `transferring`.
    this.transfers.abort();
    const reason = writeForcedEnd(this.writer, cause);
    this.attempt?.end(reason);
  }

  async run(): Promise<CallRecord> {
    try {
      return await this.runRound();
    } catch (err) {
      this.log.error({ err }, 'call session failed: ending the call');
      return this.failSafe(err);
    } finally {
      await this.release();
      this.resolveDone(this.writer.current);
    }
  }

  private async runRound(): Promise<CallRecord> {
    const record = this.writer.current;
    if (!PRE_DIAL_STATUSES.includes(record.status)) {
      this.log.warn({ status: record.status }, 'call not dialed: no longer waiting to be dialed');
      return record;
    }
    const { store } = this.deps;
    const trunk = record.sipTrunkId ? store.sipTrunks.getById(record.sipTrunkId) : undefined;
    const agent = record.agentId ? store.agents.getById(record.agentId) : undefined;
    if (!trunk) return this.endUndialed('failed', 'voip_phone_not_exist');
    if (record.agentId && !agent) return this.endUndialed('failed', 'agent_not_found');

    const round = record.dialRound ?? record.retries + 1;
    const purpose: DialPurpose =
      record.scheduledReason === 'customer_callback' && record.callbackNumber
        ? 'customer_callback'
        : 'dial';
    const numbers = numbersOfRound(this.writer.current, round, purpose);
    const zones = new Map<string, DestinationZones>();
    for (const n of numbers) zones.set(n, await this.deps.zones(n));

    const skipped: SkippedAttempt[] = [];
    let outcome: AttemptOutcome | undefined;
    for (const number of numbers) {
      if (this.stopCause) break;
      const pick = pickNumber(this.deps.store, this.deps.clock, this.writer, {
        number,
        round,
        destination: zones.get(number)!,
        purpose,
        from: this.claimed ? OPEN_STATUSES : PRE_DIAL_STATUSES,
        ...(this.idempotencyKey ? { idempotencyKey: this.idempotencyKey } : {}),
      });
      if (pick.kind === 'lost') return this.writer.current;
      if (pick.kind === 'no_channel') {
        outcome = { status: 'failed', endCallReason: pick.endCallReason, endAt: pick.endedAt };
        break;
      }
      if (pick.kind === 'skip') {
        skipped.push(pick.attempt);
        this.log.info({ skipReason: pick.attempt.skipReason }, 'number skipped by the dial gate');
        continue;
      }
      this.claimed = true;
      this.clock.enter('starting');
      // The move to trying (the claim the at-most-once rule rests on) is on
      // disk before the INVITE can leave; the agent's socket opens meanwhile.
      const onDisk = this.deps.store.unitOfWork.durable();
      onDisk.catch(() => undefined); // awaited below; the agent may end the round first
      if (agent && !(await this.agentSide.connected(agent, this.deps.agents))) {
        this.writer.updateAttempt(pick.index, {
          status: 'failed',
          endCallReason: 'agent_not_found',
          endedAt: this.writer.now(),
        });
        return this.finish({
          status: 'failed',
          endCallReason: 'agent_not_found',
          detail: 'agent_unreachable',
          endAt: this.writer.now(),
        });
      }
      await onDisk;
      outcome = await this.dial(trunk, agent, number, pick.index);
      if (!TRY_NEXT.has(outcome.status) || outcome.endCallReason.endsWith('_in_plan')) break;
    }
    if (outcome) return this.finish(outcome);
    if (this.stopCause) return this.endUndialed('cancelled', 'user_hungup');
    const from = this.claimed ? OPEN_STATUSES : PRE_DIAL_STATUSES;
    const how = writeDeferral(this.deps.store, this.writer, round, skipped, from);
    this.log.info(
      { skipReason: skipped[0]?.skipReason, how },
      'no number of the round may be dialed now',
    );
    if (how === 'deferred') this.deps.onScheduled?.();
    return this.writer.current;
  }

  private async dial(
    trunk: SipTrunk,
    agent: Agent | undefined,
    number: string,
    index: number,
  ): Promise<AttemptOutcome> {
    const now = this.writer.now();
    this.attemptIndex = index;
    const notDialed = (endCallReason: string): AttemptOutcome => {
      this.writer.updateAttempt(index, { status: 'failed', endCallReason, endedAt: now });
      return { status: 'failed', endCallReason, endAt: now };
    };
    const limit = dialTimeLimit(this.deps.store, this.writer.current);
    if (limit) return notDialed(limit);
    if (this.deps.trunkHealth?.isOffline(trunk.id)) return notDialed('voip_phone_offline');
    let media: MediaLeg;
    try {
      media = await this.deps.media.createSession({
        record: agent?.outgoing.recordingEnabled ?? false,
        srtp: trunk.media ?? 'rtp',
      });
    } catch (err) {
      this.log.error({ err }, 'no RTP session for the call');
      return notDialed('no_channels');
    }
    this.media = media;
    // Carried by the attempt's first write, with the INVITE's Call-ID.
    const participant = this.writer.stageParticipant({
      type: 'trunk',
      role: 'Contact',
      deviceKind: 'trunk',
      status: 'invited',
      invitedAt: now,
      phoneNumber: number,
      rtpPort: media.localPort,
      initiator: false,
    });
    const ringTimeoutMs =
      1000 * (agent?.outgoing.ringTimeoutSeconds ?? this.deps.settings.defaultRingTimeoutSeconds);
    const maxDurationMs =
      1000 * (agent?.outgoing.maxDurationSeconds ?? this.deps.settings.defaultMaxDurationSeconds);
    const attempt = new CallAttempt(
      this.writer,
      this.deps.signaling,
      media,
      this.deps.timers,
      this.log,
      participant,
      index,
      {
        ringTimeoutMs,
        maxDurationMs,
        planSecondsLeft:
          this.deps.store.companies.getPlan(this.writer.current.companyId)?.secondsRemaining ??
          null,
        mediaSilenceMs: 1000 * (this.deps.settings.mediaInactivitySeconds ?? 0),
      },
      {
        joining: (at) => this.agentSide.joining(at),
        answered: (leg, endCall, farEndHeaders) => {
          const routes = new MediaRoutes(leg, this.deps.relayLatency);
          this.routes = routes;
          this.agentSide.bridge(
            routes.agentView,
            endCall,
            {
              transfer: (request) => this.transfers.fromAgent(request),
              consult: (action) => this.transfers.fromAgentConsult(action),
            },
            farEndHeaders,
          );
        },
        dtmf: (digit) => this.agentSide.link?.dtmf(digit),
        progress: (phase) =>
          this.clock.enter(phase, phase === 'in_call' ? maxDurationMs : ringTimeoutMs),
        dialog: (d) => {
          this.deps.store.dialogs.save(this.recordId, d, this.writer.now());
          this.dialogKept = true;
        },
      },
    );
    this.attempt = attempt;
    if (this.stopCause) attempt.end('user_hungup');
    else {
      const request = buildDialRequest(
        trunk,
        number,
        this.writer.current.callerId,
        media.createOffer(),
        this.writer.current.sipHeaders,
      );
      this.clock.enter('dialing', ringTimeoutMs);
      attempt.start(request);
    }
    const ended = await attempt.outcome.finally(() => this.transfers.abort());
    // Bridged to a transfer target: either party hanging up ends the call as transferred.
    const bridged = this.transfers.bridged;
    await this.transfers.endBridge();
    const outcome: AttemptOutcome =
      bridged && (ended.status === 'answered' || ended.status === 'transferred')
        ? { ...ended, status: 'transferred', endCallReason: 'call_transferred' }
        : ended;
    this.attempt = undefined;
    this.attemptIndex = undefined;
    this.forgetDialog(); // BYE sent or received: nothing left to end after a crash
    this.clock.enter('finishing');
    const closed = await this.closeMedia();
    // Carried by the round's closing write (its final status or the next round).
    this.writer.stage(
      this.writer.attemptPatch(index, {
        endedAt: outcome.endAt,
        status: outcome.status,
        endCallReason: outcome.endCallReason,
        ...(outcome.sipFailure ? { sipFailure: outcome.sipFailure } : {}),
      }),
    );
    return {
      ...outcome,
      ...(closed ? { networkQuality: closed.networkQuality } : {}),
      ...(closed?.recording ? { recordingFileId: closed.recording.fileId } : {}),
    };
  }

  /** Transfers the connected call (issue 24): see SessionTransfers.transfer. */
  transfer(body: TransferBody, requestedBy: TransferRequestedBy): Promise<TransferResult> {
    return this.transfers.transfer(body, requestedBy);
  }

  /** The API's merge, cancel or swap of the consult under way (SessionTransfers.act). */
  consult(action: ConsultAction): Promise<TransferResult> {
    return this.transfers.act(action);
  }

  /** Ends the round: final status, or the next round scheduled (retry policy). */
  private async finish(ended: AttemptOutcome): Promise<CallRecord> {
    // The agent hears `stop` and may still report its result before it closes.
    await this.agentSide.stop();
    const verdict = ended.startAt ? this.agentSide.voicemailVerdict : undefined;
    const outcome: AttemptOutcome = verdict
      ? { ...ended, status: 'voice_mail', endCallReason: verdict }
      : ended;
    const rec = this.writer.current;
    const duration = callDuration(outcome);
    const trunk = rec.sipTrunkId ? this.deps.store.sipTrunks.getById(rec.sipTrunkId) : undefined;
    const cost = round6(((trunk?.ratePerMinute ?? 0) * duration) / 60);
    this.agentSide.left(outcome, duration);
    const reached = [...(rec.attempts ?? [])]
      .reverse()
      .find((a) => 'answeredAt' in a && a.answeredAt)?.number;
    const next =
      this.stopCause || this.forced || !this.deps.retries
        ? null
        : this.deps.retries.decide(
            // Only this round's report: a callback asked for in an earlier
            // round was planned then (it is this round, or already past).
            { ...this.writer.current, outboundResult: this.agentSide.outboundResult },
            { ...outcome, ...(reached ? { reachedNumber: reached } : {}) },
          );
    const closing = closeRound(this.writer.current, {
      outcome,
      next,
      ...(next
        ? {
            nextDueAt: intoCallingRules(
              this.deps.store,
              rec,
              next.numbers?.[0] ?? rec.phoneNumber,
              next.dueAt,
            ),
          }
        : {}),
      duration,
      totalCost: round6(rec.totalCost + cost),
      ...(this.stopCause ? { endedBy: this.stopCause } : {}),
    });
    writeRoundEnd(this.deps.store, this.writer, closing, {
      seconds: duration,
      cost,
      at: outcome.endAt,
    });
    if (closing.kind === 'next_round') {
      this.log.info(
        { lastStatus: outcome.status, kind: closing.scheduleKind },
        'next round scheduled',
      );
      this.deps.onScheduled?.();
    } else {
      this.log.info(
        { status: outcome.status, endCallReason: outcome.endCallReason, duration },
        'call finished',
      );
    }
    return this.writer.current;
  }

  /** A call that ends before any INVITE of this session (no trunk, no agent, hung up). */
  private endUndialed(status: CallStatus, endCallReason: string): CallRecord {
    this.writer.status(
      status,
      {
        endCallReason,
        endAt: this.writer.now(),
        active: false,
        ...(this.stopCause ? { endedBy: this.stopCause } : {}),
      },
      undefined,
      this.claimed ? OPEN_STATUSES : PRE_DIAL_STATUSES,
    );
    return this.writer.current;
  }

  /** An exception ended the session: the record final at once, the leg ended (docs/decisions/dial-path.md). */
  private failSafe(err: unknown): CallRecord {
    this.attempt?.abort(err);
    try {
      writeSessionError(this.writer, this.attemptIndex);
    } catch (writeErr) {
      this.log.error({ err: writeErr }, 'record not finished after a session error');
    }
    return this.writer.current;
  }

  /** The kept dialog is over; a failing delete only means one BYE too many after a crash. */
  private forgetDialog(): void {
    if (!this.dialogKept) return;
    this.dialogKept = false;
    try {
      this.deps.store.dialogs.remove(this.recordId);
    } catch (err) {
      this.log.warn({ err }, 'ended dialog not forgotten');
    }
  }

  /** Media and agent let go on every path (bounded). */
  private async release(): Promise<void> {
    this.forgetDialog();
    await this.transfers.endBridge();
    await this.closeMedia();
    await this.agentSide.stop();
  }

  /** Closes the media session; a media fault never keeps the record from finishing. */
  private async closeMedia(): Promise<Awaited<ReturnType<MediaLeg['close']>> | undefined> {
    const media = this.media;
    if (!media) return undefined;
    this.media = undefined;
    let timer: unknown;
    const timeout = new Promise<undefined>(
      (resolve) =>
        (timer = this.deps.timers.setTimeout(() => resolve(undefined), MEDIA_CLOSE_TIMEOUT_MS)),
    );
    try {
      const closed = await Promise.race([media.close(), timeout]);
      if (!closed) this.log.error('media session did not close in time');
      return closed;
    } catch (err) {
      this.log.error({ err }, 'media session failed to close');
      return undefined;
    } finally {
      this.deps.timers.clearTimeout(timer);
    }
  }
}
