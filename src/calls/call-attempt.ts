// One dial attempt of a call to one number: media session, INVITE, ring
// timeout, answer (SDP checked), the connected call and its end. Resolves
// with the attempt's outcome; the CallSession decides what follows.
import type { Logger } from 'pino';
import type { SipTrunk } from '../store/entities.js';
import type { CallRecordWriter, ParticipantStatus } from './call-record-writer.js';
import { buildDialRequest } from './invite-request.js';
import type { AgentLink } from './ports/agent-link.js';
import type { MediaLeg, NetworkQuality } from './ports/media-port.js';
import type { LegFailure, SignalingLeg, SignalingPort } from './ports/signaling-port.js';
import { mapSipFailure, type SipFailure } from './sip-failure-mapping.js';
import type { Timers } from './timers.js';

export interface AttemptOutcome {
  status:
    'answered' | 'busy' | 'missed' | 'failed' | 'cancelled' | 'failed_during_call' | 'voice_mail';
  endCallReason: string;
  /** Why, beyond the end reason (agent_unreachable, agent_disconnected). */
  detail?: string;
  sipFailure?: SipFailure;
  startAt?: string;
  endAt: string;
  networkQuality?: NetworkQuality;
  recordingFileId?: string;
}

export interface AttemptSettings {
  ringTimeoutMs: number;
  maxDurationMs: number;
  /** Plan seconds left when answered (null: unlimited). */
  planSecondsLeft: number | null;
}

/** How often a live call's networkQuality is written to the record. */
const STATS_WRITE_INTERVAL_MS = 30_000;

const SDP_FAILURES = new Set([
  'no_selected_codec',
  'no_remote_rtp_address',
  'no_remote_rtp_port',
  'sdp_error',
]);

/** How the local end of an answered call is recorded. */
const LOCAL_END_STATUS: Record<string, AttemptOutcome['status']> = {
  no_rtp_stream: 'failed_during_call',
  call_stuck: 'failed_during_call',
  agent_disconnected: 'failed_during_call',
};

export class CallAttempt {
  private leg: SignalingLeg | undefined;
  private answeredAt: string | undefined;
  private ringTimedOut = false;
  private localEnd: string | undefined;
  private settled = false;
  private readonly timers: unknown[] = [];
  private resolve!: (o: AttemptOutcome) => void;
  readonly outcome: Promise<AttemptOutcome>;
  /** The call's agent bridge, started at the answer. */
  agent: AgentLink | undefined;

  constructor(
    private readonly writer: CallRecordWriter,
    private readonly signaling: SignalingPort,
    private readonly media: MediaLeg,
    private readonly timerApi: Timers,
    private readonly log: Logger,
    private readonly participant: number,
    private readonly settings: AttemptSettings,
  ) {
    this.outcome = new Promise((r) => (this.resolve = r));
  }

  get answered(): boolean {
    return this.answeredAt !== undefined;
  }

  /** Sends the INVITE (the record says `trying` before it leaves). */
  start(trunk: SipTrunk, number: string, callerId: string | null): void {
    const request = buildDialRequest(trunk, number, callerId, this.media.createOffer());
    this.writer.status('trying');
    const leg = this.signaling.invite({
      ...request,
      answerOffer: (offer) => this.media.answerOffer(offer.sdp),
    });
    this.leg = leg;
    this.writer.updateParticipant(this.participant, { callId: leg.callId });
    this.log.info({ sipCallId: leg.callId }, 'INVITE sent');

    this.after(this.settings.ringTimeoutMs, () => {
      if (this.answered) return;
      this.ringTimedOut = true;
      this.log.info('ring timeout: cancelling');
      leg.cancel();
    });
    leg.on('provisional', (e) => this.onProvisional(e.status));
    leg.on('answered', (e) => this.onAnswered(e.sdp));
    leg.on('dtmf', (e) => this.agent?.dtmf(e.digit));
    leg.on('failed', (e) => this.onFailed(e));
    leg.on('ended', (e) =>
      this.settleConnected(e.by === 'remote' ? 'caller_hungup' : (this.localEnd ?? 'user_hungup')),
    );
  }

  /** Ends the attempt from our side: CANCEL before the answer, BYE after. */
  end(reason: string): void {
    if (this.settled || this.localEnd) return;
    this.localEnd = reason;
    if (!this.leg)
      return this.settle({ status: 'cancelled', endCallReason: reason, endAt: this.writer.now() });
    if (this.answered) {
      this.leg.bye().then(
        () => this.settleConnected(reason),
        () => this.settleConnected(reason),
      );
    } else {
      this.leg.cancel();
    }
  }

  private onProvisional(status: number): void {
    if (this.answered || this.settled || status === 100) return;
    const next = status === 183 ? 'session_progress' : 'ringing';
    const ringing = this.writer.participantPatch(this.participant, { status: 'ringing' });
    if (this.writer.current.status !== next) this.writer.status(next, ringing);
    else this.writer.write(ringing);
  }

  private onAnswered(sdp: string): void {
    if (this.settled) return;
    const now = this.writer.now();
    let negotiated;
    try {
      negotiated = this.media.applyAnswer(sdp);
    } catch (err) {
      const code = (err as { code?: string }).code;
      const endCallReason = code && SDP_FAILURES.has(code) ? code : 'sdp_error';
      this.log.warn({ endCallReason }, 'answer SDP unusable: hanging up');
      this.answeredAt = now;
      this.localEnd = endCallReason;
      void this.leg?.bye({ q850: 65, text: endCallReason }).catch(() => undefined);
      return this.settle({ status: 'failed', endCallReason, endAt: now });
    }
    this.answeredAt = now;
    this.writer.status('in_call', {
      startAt: now,
      rtpPort: this.media.localPort,
      rtpIp: this.media.localAddress,
      hertz: 8000,
      ...this.writer.participantPatch(this.participant, {
        status: 'joined',
        joinedAt: now,
        codec: negotiated.codec,
        hertz: 8000,
        remoteAddress: negotiated.remoteAddress,
        remotePort: negotiated.remotePort,
      }),
    });
    this.log.info({ codec: negotiated.codec }, 'call answered');

    this.after(this.settings.maxDurationMs, () => this.end('call_maximum_time_reached'));
    const planLeft = this.settings.planSecondsLeft;
    if (planLeft !== null && planLeft * 1000 < this.settings.maxDurationMs) {
      this.after(planLeft * 1000, () => this.end('no_seconds_available_in_plan'));
    }
    this.media.on('inactive', () => this.end('no_rtp_stream'));
    this.agent?.start(this.media, { hangup: (reason) => this.end(reason) });
    // Refreshed while the call runs (a write without an fsync, but still a row
    // rewrite): at most every STATS_WRITE_INTERVAL_MS; the final figures at the end.
    let lastStatsWrite = Date.parse(now);
    this.media.on('stats', (q) => {
      const at = Date.parse(this.writer.now());
      if (at - lastStatsWrite < STATS_WRITE_INTERVAL_MS) return;
      lastStatsWrite = at;
      this.writer.write({ networkQuality: q });
    });
  }

  private onFailed(f: LegFailure): void {
    if (this.answered) return this.settleConnected(this.localEnd ?? 'caller_hungup');
    const mapped = mapSipFailure(f, this.ringTimedOut);
    const ours = mapped.status === 'cancelled';
    const endCallReason = ours ? (this.localEnd ?? mapped.endCallReason) : mapped.endCallReason;
    const status = ours && this.localEnd === 'call_stuck' ? 'failed' : mapped.status;
    this.log.info(
      { sipStatus: f.status, q850: f.q850, cause: f.cause, endCallReason },
      'call not connected',
    );
    this.settle({ ...mapped, status, endCallReason, endAt: this.writer.now() });
  }

  private settleConnected(reason: string): void {
    if (!this.answered) return;
    // The agent's socket closing mid-call: the agent side ended it, abnormally.
    const agentGone = reason === 'agent_disconnected';
    this.settle({
      status: LOCAL_END_STATUS[reason] ?? 'answered',
      endCallReason: agentGone ? 'user_hungup' : reason,
      ...(agentGone ? { detail: reason } : {}),
      startAt: this.answeredAt,
      endAt: this.writer.now(),
    });
  }

  private settle(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    for (const t of this.timers) this.timerApi.clearTimeout(t);
    this.writer.updateParticipant(this.participant, {
      status: participantStatus(outcome),
      ...(this.answered ? { leftAt: outcome.endAt } : {}),
    });
    this.resolve(outcome);
  }

  private after(ms: number, fn: () => void): void {
    this.timers.push(this.timerApi.setTimeout(fn, ms));
  }
}

function participantStatus(o: AttemptOutcome): ParticipantStatus {
  if (o.startAt) return 'left';
  switch (o.status) {
    case 'busy':
      return 'rejected';
    case 'missed':
      return 'no_answer';
    case 'cancelled':
      return 'cancelled';
    default:
      return o.sipFailure?.kind === 'phone_unreachable' ||
        o.endCallReason === 'no_voip_connection' ||
        o.endCallReason === 'failed_to_connect'
        ? 'unreachable'
        : 'failed';
  }
}
