// One call from dial to final record: attempts on the primary number, then
// on the alternates (additionalPhoneNumbers) in order after a failed one,
// then the final status, costs and plan charge.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { CallRecord } from '../store/call-repository.js';
import type { Agent, SipTrunk } from '../store/entities.js';
import type { Store } from '../store/store.js';
import { CallAttempt, type AttemptOutcome } from './call-attempt.js';
import { CallRecordWriter } from './call-record-writer.js';
import { LIVE_STATUSES } from './call-status.js';
import { PRE_DIAL_STATUSES } from './scheduling/scheduler.js';
import type { AgentLink, AgentLinkFactory } from './ports/agent-link.js';
import type { MediaLeg, MediaPort } from './ports/media-port.js';
import type { SignalingPort } from './ports/signaling-port.js';
import type { Timers } from './timers.js';
import type { TrunkHealth } from './trunk-resolution.js';

export interface CallSessionDeps {
  store: Store;
  clock: Clock;
  timers: Timers;
  signaling: SignalingPort;
  media: MediaPort;
  log: Logger;
  settings: { defaultRingTimeoutSeconds: number; defaultMaxDurationSeconds: number };
  /** Trunks the OPTIONS monitor sees as offline are not dialed (voip_phone_offline). */
  trunkHealth?: TrunkHealth;
  /** Plans retries and callbacks when a call ends (returns null when none is due). */
  retries?: { onCallFinished(record: CallRecord): unknown };
  /** Told when a retry was scheduled (the scheduler polls at once). */
  onScheduled?: () => void;
  /** Bridges answered calls to their AI agent (none: the call runs without one). */
  agents?: AgentLinkFactory;
}

const MEDIA_CLOSE_TIMEOUT_MS = 2000;

/** Outcomes after which the next alternate number is tried. */
const TRY_NEXT = new Set(['busy', 'missed', 'failed']);

export class CallSession {
  private readonly writer: CallRecordWriter;
  private readonly log: Logger;
  private attempt: CallAttempt | undefined;
  private stopReason: string | undefined;
  private stopCause: 'api' | 'shutdown' | 'watchdog' | undefined;
  private aiParticipant: number | undefined;
  private agentLink: AgentLink | undefined;

  constructor(
    record: CallRecord,
    private readonly deps: CallSessionDeps,
    /** The scheduler's key for this dial (kept on the attempt). */
    private readonly idempotencyKey?: string,
  ) {
    this.writer = new CallRecordWriter(deps.store, deps.clock, record.id);
    this.log = deps.log.child({ callId: record.callId });
  }

  get recordId(): string {
    return this.writer.current.id;
  }

  get startedMs(): number {
    return Date.parse(this.writer.current.createdAt);
  }

  /** Ends the call from our side: the hangup API, shutdown (user_hungup, marked endedBy) or the watchdog (call_stuck). */
  stop(cause: 'api' | 'shutdown' | 'watchdog'): void {
    const reason = cause === 'watchdog' ? 'call_stuck' : 'user_hungup';
    this.stopCause ??= cause;
    this.stopReason ??= reason;
    this.attempt?.end(reason);
  }

  async run(): Promise<CallRecord> {
    try {
      return await this.runAttempts();
    } finally {
      await this.agentLink?.stop();
    }
  }

  private async runAttempts(): Promise<CallRecord> {
    // At most once: only the session that moves the record out of its
    // pre-dial status dials it (a scheduler lease that expired, a restart).
    if (!this.writer.status('trying', {}, 'dial', PRE_DIAL_STATUSES)) {
      this.log.warn(
        { status: this.writer.current.status },
        'call not dialed: no longer waiting to be dialed',
      );
      return this.writer.current;
    }
    const record = this.writer.current;
    const { store } = this.deps;
    const trunk = record.sipTrunkId
      ? store.sipTrunks.getById(record.sipTrunkId as string)
      : undefined;
    const agent = record.agentId ? store.agents.getById(record.agentId) : undefined;
    if (!trunk)
      return this.finish({
        status: 'failed',
        endCallReason: 'voip_phone_not_exist',
        endAt: this.writer.now(),
      });
    if (record.agentId && !agent)
      return this.finish({
        status: 'failed',
        endCallReason: 'agent_not_found',
        endAt: this.writer.now(),
      });

    if (agent && this.deps.agents && !record.isInternalCall) {
      // No phone rings without an agent: connect before the INVITE.
      const link = this.deps.agents(record, agent);
      try {
        await link.connect();
        this.agentLink = link;
      } catch (err) {
        this.log.warn({ err }, 'agent unreachable: call not dialed');
        return this.finish({
          status: 'failed',
          endCallReason: 'agent_not_found',
          endAt: this.writer.now(),
          detail: 'agent_unreachable',
        });
      }
    }
    if (agent) {
      this.aiParticipant = this.writer.addParticipant({
        type: 'ai',
        role: 'Agent',
        status: 'invited',
        invitedAt: this.writer.now(),
        agentId: agent.id,
        agentName: agent.name,
        initiator: true,
      });
    }
    const numbers = [
      record.phoneNumber,
      ...((record.additionalPhoneNumbers as string[] | undefined) ?? []),
    ];
    let outcome: AttemptOutcome = {
      status: 'cancelled',
      endCallReason: this.stopReason ?? 'user_hungup',
      endAt: this.writer.now(),
    };
    for (const number of numbers) {
      if (this.stopReason) break;
      outcome = await this.dial(trunk, agent, number);
      if (!TRY_NEXT.has(outcome.status) || outcome.endCallReason.endsWith('_in_plan')) break;
    }
    return this.finish(outcome);
  }

  private async dial(
    trunk: SipTrunk,
    agent: Agent | undefined,
    number: string,
  ): Promise<AttemptOutcome> {
    const now = this.writer.now();
    const limit = this.dialTimeLimit();
    if (limit) return { status: 'failed', endCallReason: limit, endAt: now };
    if (this.deps.trunkHealth?.isOffline(trunk.id))
      return { status: 'failed', endCallReason: 'voip_phone_offline', endAt: now };

    let media;
    try {
      media = await this.deps.media.createSession({
        record: agent?.outgoing.recordingEnabled ?? false,
      });
    } catch (err) {
      this.log.error({ err }, 'no RTP session for the call');
      return { status: 'failed', endCallReason: 'no_channels', endAt: now };
    }
    const participant = this.writer.addParticipant({
      type: 'trunk',
      role: 'Contact',
      deviceKind: 'trunk',
      status: 'invited',
      invitedAt: now,
      phoneNumber: number,
      rtpPort: media.localPort,
      initiator: false,
    });
    const attemptIndex = this.writer.addAttempt({
      number,
      startedAt: now,
      ...(this.idempotencyKey ? { idempotencyKey: this.idempotencyKey } : {}),
    });
    const attempt = new CallAttempt(
      this.writer,
      this.deps.signaling,
      media,
      this.deps.timers,
      this.log,
      participant,
      {
        ringTimeoutMs:
          1000 *
          (agent?.outgoing.ringTimeoutSeconds ?? this.deps.settings.defaultRingTimeoutSeconds),
        maxDurationMs:
          1000 *
          (agent?.outgoing.maxDurationSeconds ?? this.deps.settings.defaultMaxDurationSeconds),
        planSecondsLeft:
          this.deps.store.companies.getPlan(this.writer.current.companyId)?.secondsRemaining ??
          null,
      },
    );
    this.attempt = attempt;
    attempt.agent = this.agentLink;
    if (this.stopReason) attempt.end(this.stopReason);
    else attempt.start(trunk, number, (this.writer.current.callerId as string | null) ?? null);

    const outcome = await attempt.outcome;
    this.attempt = undefined;
    const closed = await this.closeMedia(media);
    const withMedia: AttemptOutcome = {
      ...outcome,
      ...(closed ? { networkQuality: closed.networkQuality } : {}),
      ...(closed?.recording ? { recordingFileId: closed.recording.fileId } : {}),
    };
    this.writer.updateAttempt(attemptIndex, {
      endedAt: outcome.endAt,
      status: outcome.status,
      endCallReason: outcome.endCallReason,
      ...(outcome.startAt ? { answeredAt: outcome.startAt } : {}),
      ...(outcome.sipFailure ? { sipFailure: outcome.sipFailure } : {}),
    });
    return withMedia;
  }

  /** Closes the media session; a media fault never keeps the record from finishing. */
  private async closeMedia(
    media: MediaLeg,
  ): Promise<Awaited<ReturnType<MediaLeg['close']>> | undefined> {
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

  /** Plan limits checked again when dialing (DESIGN: at dial time as well as request time). */
  private dialTimeLimit(): string | undefined {
    const { store } = this.deps;
    const rec = this.writer.current;
    const plan = store.companies.getPlan(rec.companyId);
    if (!plan) return undefined;
    if (plan.secondsRemaining !== null && plan.secondsRemaining <= 0)
      return 'no_seconds_available_in_plan';
    if (plan.maxChannels !== null) {
      const live =
        store.calls.countByStatus(rec.companyId, LIVE_STATUSES) -
        (LIVE_STATUSES.includes(rec.status as never) ? 1 : 0);
      if (live >= plan.maxChannels) return 'no_channels_available_in_plan';
    }
    return undefined;
  }

  private async finish(ended: AttemptOutcome): Promise<CallRecord> {
    // The agent hears `stop` and may still report its result before it closes.
    await this.agentLink?.stop();
    const voicemail = ended.startAt ? this.agentLink?.voicemail() : undefined;
    const outcome: AttemptOutcome = voicemail
      ? { ...ended, status: 'voice_mail', endCallReason: voicemail }
      : ended;
    const rec = this.writer.reload();
    const startAt = outcome.startAt;
    const duration = startAt
      ? Math.max(0, Math.round((Date.parse(outcome.endAt) - Date.parse(startAt)) / 1000))
      : 0;
    const trunk = rec.sipTrunkId
      ? this.deps.store.sipTrunks.getById(rec.sipTrunkId as string)
      : undefined;
    const cost = round6(((trunk?.ratePerMinute ?? 0) * duration) / 60);
    const totalCost = round6((typeof rec.totalCost === 'number' ? rec.totalCost : 0) + cost);
    if (this.aiParticipant !== undefined) {
      this.writer.updateParticipant(
        this.aiParticipant,
        startAt
          ? { status: 'left', joinedAt: startAt, leftAt: outcome.endAt, durationSeconds: duration }
          : { status: 'cancelled' },
      );
    }
    // The charge and the final status in one transaction: one fsync, and a
    // crash cannot leave a charged call unfinished or a finished one uncharged.
    return this.deps.store.db.transaction(() => {
      if (duration > 0 || cost > 0) {
        this.deps.store.companies.charge(rec.companyId, duration, cost, outcome.endAt);
      }
      return this.settleRecord(outcome, { startAt, duration, totalCost });
    })();
  }

  private settleRecord(
    outcome: AttemptOutcome,
    { startAt, duration, totalCost }: { startAt?: string; duration: number; totalCost: number },
  ): CallRecord {
    const media = {
      totalCost,
      ...(outcome.networkQuality ? { networkQuality: outcome.networkQuality } : {}),
      ...(outcome.recordingFileId ? { recordingFileId: outcome.recordingFileId } : {}),
    };
    if (this.retryScheduled(outcome, media)) return this.writer.reload();

    this.writer.status(outcome.status, {
      ...media,
      endCallReason: outcome.endCallReason,
      ...(outcome.sipFailure ? { sipFailure: outcome.sipFailure } : {}),
      ...(startAt ? { startAt } : {}),
      endAt: outcome.endAt,
      duration,
      active: false,
      ...(outcome.detail ? { endDetail: outcome.detail } : {}),
      ...(this.stopCause ? { endedBy: this.stopCause } : {}),
    });
    this.log.info(
      { status: outcome.status, endCallReason: outcome.endCallReason, duration },
      'call finished',
    );
    return this.writer.current;
  }

  /**
   * Retries (spec §2.1 maxRetries, retryDelayMinutes) and callbacks the callee
   * asked for: the policy puts the record back to `scheduled` when another
   * dial is due; then this attempt's outcome stays in `attempts` only.
   */
  private retryScheduled(outcome: AttemptOutcome, patch: Partial<CallRecord>): boolean {
    if (!this.deps.retries || this.stopCause) return false;
    try {
      this.writer.write(patch);
      const result = this.deps.retries.onCallFinished({
        ...this.writer.current,
        status: outcome.status,
        endCallReason: outcome.endCallReason,
        ...(outcome.startAt ? { startAt: outcome.startAt } : {}),
      });
      if (!result) return false;
      this.log.info({ lastStatus: outcome.status }, 'next dial scheduled');
      this.deps.onScheduled?.();
      return true;
    } catch (err) {
      this.log.warn({ err }, 'next dial not scheduled');
      return false;
    }
  }
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
