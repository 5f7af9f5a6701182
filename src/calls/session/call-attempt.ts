// One dial attempt of a call to one number: INVITE, ring timeout, answer
// (SDP checked), the connected call and its end. Part of the call session:
// it writes the record through the session's writer. Resolves with the
// attempt's outcome; rejects when something inside it threw, so the session
// can end the call cleanly (docs/decisions/dial-path.md).
import type { Logger } from 'pino';
import type { AttemptStatus, NetworkQuality, SipFailure } from '../../model/call-record.js';
import type { ParticipantStatus } from '../../model/call-record.js';
import type { MediaLeg } from '../ports/media-port.js';
import type {
  DialogSnapshot,
  DialRequest,
  LegEvents,
  LegFailure,
  SignalingLeg,
  SignalingPort,
} from '../ports/signaling-port.js';
import { mapSipFailure } from '../sip-failure-mapping.js';
import type { Timers } from '../timers.js';
import { FarEndLiveness } from './far-end-liveness.js';
import type { RecordWriter } from './record-writer.js';

export interface AttemptOutcome {
  status: AttemptStatus;
  endCallReason: string;
  /** Why, beyond the end reason (agent_unreachable, agent_disconnected, session_error). */
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
  /** RTP silence after which the far end is asked whether it is still there
   *  (rtp.inactivitySeconds; 0: never). */
  mediaSilenceMs: number;
}

/** What the attempt tells its session as the call moves on. */
export interface AttemptHooks {
  /** 200 OK with a usable answer, before the record says so: stage what joins with it. */
  joining(at: string): void;
  /** 200 OK with a usable answer: bridge the agent now. */
  /** `farEndHeaders`: the X- headers of the 2xx (handed to the agent in start.customParameters). */
  answered(
    media: MediaLeg,
    endCall: (reason: string) => void,
    farEndHeaders: Record<string, string>,
  ): void;
  /** A DTMF digit from SIP INFO. */
  dtmf(digit: string): void;
  /** Any state change (the watchdog measures progress from these). */
  progress(phase: 'ringing' | 'in_call'): void;
  /** The confirmed dialog, or what changed in it: keep it for a BYE after a crash. */
  dialog(dialog: DialogSnapshot): void;
}

/** How often a live call's networkQuality is written to the record. */
const STATS_WRITE_INTERVAL_MS = 30_000;

const SDP_FAILURES = new Set([
  'no_selected_codec',
  'no_remote_rtp_address',
  'no_remote_rtp_port',
  'sdp_error',
  'srtp_negotiation_failed',
]);

/** How the local end of an answered call is recorded. */
const LOCAL_END_STATUS: Record<string, AttemptStatus> = {
  no_rtp_stream: 'failed_during_call',
  call_stuck: 'failed_during_call',
  agent_disconnected: 'failed_during_call',
  no_voip_connection: 'failed_during_call',
  call_transferred: 'transferred',
};

/**
 * Why the SIP stack itself ended an answered call (the `ended` event's
 * detail): the far end stopped refreshing the session, or did not answer our
 * refresh, or no longer knew the dialog (RFC 4028 §10). The signaling path
 * to the far end is lost: no_voip_connection (docs/decisions/no-zombie-calls.md).
 */
const SESSION_LOST = new Set([
  'session_expired',
  'session_refresh_no_answer',
  'session_refresh_481',
]);

export class CallAttempt {
  private leg: SignalingLeg | undefined;
  private answeredAt: string | undefined;
  /** A provisional response above 100 came (RFC 3261 §9.1: only then may we CANCEL). */
  private provisional = false;
  private ringTimedOut = false;
  private localEnd: string | undefined;
  private localDetail: string | undefined;
  private liveness: FarEndLiveness | undefined;
  private settled = false;
  private readonly timers: unknown[] = [];
  private resolve!: (o: AttemptOutcome) => void;
  private reject!: (err: unknown) => void;
  readonly outcome: Promise<AttemptOutcome>;

  constructor(
    private readonly writer: RecordWriter,
    private readonly signaling: SignalingPort,
    private readonly media: MediaLeg,
    private readonly timerApi: Timers,
    private readonly log: Logger,
    private readonly participant: number,
    private readonly attemptIndex: number,
    private readonly settings: AttemptSettings,
    private readonly hooks: AttemptHooks,
  ) {
    this.outcome = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A throw before the session awaits the outcome (building the INVITE)
    // still ends up in the session's catch; the rejection is never unhandled.
    this.outcome.catch(() => undefined);
  }

  get answered(): boolean {
    return this.answeredAt !== undefined;
  }

  /** The confirmed leg while the call is connected and not ending (a transfer's REFER goes there). */
  get connectedLeg(): SignalingLeg | undefined {
    return this.answered && !this.settled && !this.localEnd ? this.leg : undefined;
  }

  /** A dialog (or an INVITE transaction) exists that the far end knows of. */
  get hasLeg(): boolean {
    return this.leg !== undefined;
  }

  /**
   * Sends the INVITE. `inviteSentAt` is committed when the SIP stack is about
   * to hand the request to its transport, after any address resolution:
   * after a crash, an attempt without it provably never rang (dial-path.md).
   * If that write fails, the INVITE is not sent.
   */
  start(request: Omit<DialRequest, 'answerOffer' | 'onSending'>): void {
    const leg = this.signaling.invite({
      ...request,
      answerOffer: (offer) => this.media.answerOffer(offer.sdp),
      onSending: () => this.markSending(),
      onDialog: (d) => this.keepDialog(d),
    });
    this.leg = leg;
    this.writer.write({
      ...this.writer.participantPatch(this.participant, { callId: leg.callId }),
      ...this.writer.attemptPatch(this.attemptIndex, { sipCallId: leg.callId }),
    });
    this.log.info({ sipCallId: leg.callId }, 'INVITE sent');

    this.after(this.settings.ringTimeoutMs, () => this.onRingTimeout());
    leg.on('provisional', (e) => this.guard(() => this.onProvisional(e.status)));
    leg.on('answered', (e) => this.guard(() => this.onAnswered(e.sdp, xHeaders(e.headers))));
    leg.on('dtmf', (e) => this.guard(() => this.hooks.dtmf(e.digit)));
    leg.on('failed', (e) => this.guard(() => this.onFailed(e)));
    leg.on('ended', (e) => this.guard(() => this.onEnded(e)));
  }

  private onEnded(e: LegEvents['ended']): void {
    if (e.by === 'remote') return this.settleConnected('caller_hungup');
    if (!this.localEnd && e.detail && SESSION_LOST.has(e.detail)) {
      this.log.warn({ detail: e.detail }, 'session timer ended the call: far end lost');
      return this.settleConnected('no_voip_connection', e.detail);
    }
    this.settleConnected(this.localEnd ?? 'user_hungup', this.localDetail);
  }

  /** Called by the SIP stack mid-send: a failing write must not escape into it. */
  private keepDialog(d: DialogSnapshot): void {
    try {
      this.hooks.dialog(d);
    } catch (err) {
      this.log.error({ err }, 'dialog not kept: a crash now would leave it without a BYE');
    }
  }

  /**
   * Ends the attempt from our side: BYE after the answer, CANCEL before it
   * (held by the SIP stack until a provisional response, RFC 3261 §9.1).
   * The outcome is settled as soon as the request is sent; its transaction
   * finishes in the background (dial-path.md "Drain").
   */
  end(reason: string, detail?: string): void {
    this.guard(() => this.endNow(reason, detail));
  }

  private endNow(reason: string, detail?: string): void {
    if (this.settled || this.localEnd) return;
    this.localEnd = reason;
    this.localDetail = detail;
    const leg = this.leg;
    if (!leg) {
      this.settle({ status: 'cancelled', endCallReason: reason, endAt: this.writer.now() });
      return;
    }
    if (this.answered) {
      leg.bye().catch((err: unknown) => this.log.warn({ err }, 'BYE failed'));
      this.settleConnected(reason, detail);
      return;
    }
    leg.cancel();
    const status = reason === 'call_stuck' ? 'failed' : 'cancelled';
    this.settle({ status, endCallReason: reason, endAt: this.writer.now() });
  }

  /**
   * Committed without an fsync on purpose: in WAL mode the commit survives a
   * process crash once written, and an fsync (milliseconds) would widen the
   * window in which a crash leaves the mark without the INVITE on the wire
   * (a call then finished call_stuck that never rang). It becomes power-safe
   * with the next synchronous commit (dial-path.md).
   */
  private markSending(): void {
    try {
      const marked = this.writer.write(
        this.writer.attemptPatch(this.attemptIndex, { inviteSentAt: this.writer.now() }),
        'invite',
      );
      // Final already, or no longer this node's (a peer adopted it): no INVITE leaves.
      if (!marked) throw new Error('the record may not be dialed from here any more');
    } catch (err) {
      this.abort(err);
      throw err; // the stack does not send an INVITE it could not record
    }
  }

  /** Something threw: end the leg however we can and reject the outcome. */
  abort(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.clearTimers();
    try {
      if (this.leg && this.answered) {
        this.leg.bye({ q850: 41, text: 'session_error' }).catch(() => undefined);
      } else this.leg?.cancel();
    } catch (e) {
      this.log.warn({ err: e }, 'leg not ended after a session error');
    }
    this.reject(err);
  }

  private onRingTimeout(): void {
    if (this.answered || this.settled) return;
    this.ringTimedOut = true;
    this.leg?.cancel();
    if (this.provisional) {
      this.log.info('ring timeout: cancelling');
      return; // the 487 to our CANCEL settles it as missed
    }
    // Nothing but 100 Trying: the phone never rang. No CANCEL may be sent
    // yet (§9.1); the stack holds it and lets the transaction time out.
    this.log.info('ring timeout without a provisional response: failed to connect');
    this.settle({ status: 'failed', endCallReason: 'failed_to_connect', endAt: this.writer.now() });
  }

  private onProvisional(status: number): void {
    if (this.answered || this.settled || status === 100) return;
    this.provisional = true;
    const next = status === 183 ? 'session_progress' : 'ringing';
    const ringing = this.writer.participantPatch(this.participant, { status: 'ringing' });
    if (this.writer.current.status !== next) this.writer.status(next, ringing);
    else this.writer.write(ringing);
    this.hooks.progress('ringing');
  }

  private onAnswered(sdp: string, farEndHeaders: Record<string, string>): void {
    if (this.settled) return;
    const now = this.writer.now();
    let negotiated;
    try {
      negotiated = this.media.applyAnswer(sdp);
    } catch (err) {
      const code = (err as { code?: string }).code;
      this.answeredAt = now; // a dialog exists: it is ended with BYE
      if (!code || !SDP_FAILURES.has(code)) throw err; // our fault, not the far end's SDP
      // No endCallReason names SRTP: a far end without a usable key sent an unusable SDP.
      const endCallReason = code === 'srtp_negotiation_failed' ? 'sdp_error' : code;
      this.log.warn({ endCallReason }, 'answer SDP unusable: hanging up');
      this.answeredAt = now;
      this.localEnd = endCallReason;
      void this.leg?.bye({ q850: 65, text: endCallReason }).catch(() => undefined);
      return this.settle({ status: 'failed', endCallReason, endAt: now });
    }
    this.answeredAt = now;
    this.hooks.joining(now);
    this.writer.status('in_call', {
      startAt: now,
      rtpPort: this.media.localPort,
      rtpIp: this.media.localAddress,
      hertz: 8000,
      ...(Object.keys(farEndHeaders).length > 0 ? { farEndHeaders } : {}),
      ...this.writer.attemptPatch(this.attemptIndex, { answeredAt: now }),
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
    this.hooks.progress('in_call');

    this.after(this.settings.maxDurationMs, () => this.end('call_maximum_time_reached'));
    const planLeft = this.settings.planSecondsLeft;
    if (planLeft !== null && planLeft * 1000 < this.settings.maxDurationMs) {
      this.after(planLeft * 1000, () => this.end('no_seconds_available_in_plan'));
    }
    this.media.on('inactive', () => this.guard(() => this.end('no_rtp_stream')));
    this.watchFarEnd();
    this.hooks.answered(this.media, (reason) => this.guard(() => this.end(reason)), farEndHeaders);
    // Refreshed while the call runs (a write without an fsync, but still a row
    // rewrite): at most every STATS_WRITE_INTERVAL_MS; the final figures at the end.
    let lastStatsWrite = Date.parse(now);
    this.media.on('stats', (q) =>
      this.guard(() => {
        this.liveness?.packets(q.packetsReceived);
        const at = Date.parse(this.writer.now());
        if (at - lastStatsWrite < STATS_WRITE_INTERVAL_MS) return;
        lastStatsWrite = at;
        this.writer.write({ networkQuality: q });
      }),
    );
  }

  /** RTP silence and no answer in the dialog: the far end is gone (far-end-liveness.ts). */
  private watchFarEnd(): void {
    const leg = this.leg;
    if (this.settings.mediaSilenceMs <= 0 || !leg?.probe) return;
    const probe = leg.probe.bind(leg);
    let received = 0;
    try {
      received = this.media.stats().packetsReceived;
    } catch {
      // figures not there yet: count from zero
    }
    this.liveness = new FarEndLiveness(
      { now: () => Date.parse(this.writer.now()) },
      {
        silenceMs: this.settings.mediaSilenceMs,
        probe,
        gone: (detail) =>
          this.guard(() => {
            this.log.warn({ detail }, 'no RTP and no answer in the dialog: far end lost');
            this.endNow('no_voip_connection', detail);
          }),
        onError: (err) => this.log.warn({ err }, 'far-end probe failed'),
      },
      received,
    );
  }

  private onFailed(f: LegFailure): void {
    if (this.answered) return this.settleConnected(this.localEnd ?? 'caller_hungup');
    if (this.settled) return;
    // DESIGN: no answer beyond 100 Trying when a timer fires → failed_to_connect.
    const silent = !this.provisional && this.ringTimedOut && f.cause !== 'timeout';
    const mapped = silent
      ? { status: 'failed' as const, endCallReason: 'failed_to_connect' }
      : mapSipFailure(f, this.ringTimedOut);
    const ours = mapped.status === 'cancelled';
    const endCallReason = ours ? (this.localEnd ?? mapped.endCallReason) : mapped.endCallReason;
    const status = ours && this.localEnd === 'call_stuck' ? 'failed' : mapped.status;
    this.log.info(
      { sipStatus: f.status, q850: f.q850, cause: f.cause, endCallReason },
      'call not connected',
    );
    this.settle({ ...mapped, status, endCallReason, endAt: this.writer.now() });
  }

  private settleConnected(reason: string, detail?: string): void {
    if (!this.answered) return;
    // The agent's socket closing mid-call: the agent side ended it, abnormally.
    const agentGone = reason === 'agent_disconnected';
    const why = agentGone ? reason : detail;
    this.settle({
      status: LOCAL_END_STATUS[reason] ?? 'answered',
      endCallReason: agentGone ? 'user_hungup' : reason,
      ...(why ? { detail: why } : {}),
      startAt: this.answeredAt,
      endAt: this.writer.now(),
    });
  }

  /** Resolves the outcome; a failing write instead rejects it (never left pending). */
  private settle(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.clearTimers();
    try {
      // Carried by the round's closing write (record-writer.ts).
      this.writer.stage(
        this.writer.participantPatch(this.participant, {
          status: participantStatus(outcome),
          ...(this.answered ? { leftAt: outcome.endAt } : {}),
        }),
      );
    } catch (err) {
      this.abort(err);
      return;
    }
    this.settled = true;
    this.resolve(outcome);
  }

  /** Runs an event handler; a throw ends the attempt instead of escaping into the SIP or media layer. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.abort(err);
    }
  }

  private after(ms: number, fn: () => void): void {
    this.timers.push(this.timerApi.setTimeout(() => this.guard(fn), ms));
  }

  private clearTimers(): void {
    for (const t of this.timers) this.timerApi.clearTimeout(t);
    this.timers.length = 0;
    this.liveness?.stop();
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

/** Most X- headers of a 2xx kept, and how long each may be (a far end is not trusted with our record's size). */
const MAX_FAR_END_HEADERS = 16;
const MAX_FAR_END_VALUE = 512;

/** The X- headers of a 2xx, names in lower case (RFC 3261 §7.3.1: they compare case-insensitively); the first of a name wins. */
function xHeaders(headers: Array<[string, string]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, value] of headers ?? []) {
    const key = name.toLowerCase();
    if (!key.startsWith('x-') || seen.has(key)) continue;
    if (seen.size >= MAX_FAR_END_HEADERS) break;
    seen.add(key);
    out[key] = value.slice(0, MAX_FAR_END_VALUE);
  }
  return out;
}
