// The call's AI agent over its WebSocket (AgentLink): connects before the
// INVITE, bridges audio both ways from the answer (format conversion on our
// side), relays marks, clear, DTMF and hangup, writes what the agent reports
// onto the call record, runs voicemail detection on the callee's first
// seconds, and on stop gives the agent a moment for its last frames.
import type { Logger } from 'pino';
import {
  AgentConnection,
  monotonicClock,
  renderPrompt,
  type AgentAudio,
  type AgentCloseInfo,
  type AgentClock,
  type AgentConnectOptions,
  LatencyHistogram,
  type PromptSuperVariable,
} from '../agent/index.js';
import type { Clock } from '../clock.js';
import type { CallRecord } from '../model/call-record.js';
import type { Agent } from '../model/entities.js';
import { AgentAudioReader, CalleeAudioConverter } from './agent-audio.js';
import {
  AGENT_LATENCY_BOUNDS_MS,
  agentConnectTime,
  agentRtpToWsLatency,
  agentWsToRtpLatency,
} from './agent-latency.js';
import type {
  AgentLink,
  AgentLinkHooks,
  TransferProgressEvent,
} from '../calls/ports/agent-link.js';
import type { MediaLeg, ReceivedFrame } from '../calls/ports/media-port.js';
import { realTimers, type Timers } from '../calls/timers.js';
import {
  VoicemailDetector,
  type VoicemailDetectorOptions,
  type VoicemailEvent,
} from './voicemail-detector.js';

export interface AgentBridgeDeps {
  /** Wall clock. */
  clock: Clock;
  log: Logger;
  timers?: Timers;
  /** Until the agent's WebSocket is open. Default 5000. */
  connectTimeoutMs?: number;
  /** How long after `stop` the agent may still send its result before we close. Default 1500. */
  stopGraceMs?: number;
  /** Extra headers on the upgrade request (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Process-wide histograms (default: the ones in agent-latency.ts). */
  latency?: { rtpToWs: LatencyHistogram; wsToRtp: LatencyHistogram; connect?: LatencyHistogram };
  /** Monotonic clock shared with the media layer's `receivedAt` (default performance.now). */
  monotonic?: AgentClock;
  voicemail?: Partial<VoicemailDetectorOptions>;
  /** Seam for tests. */
  connect?: (opts: AgentConnectOptions) => Promise<AgentConnection>;
  /** Where agent URLs may lead (agent.allowedNetworks); absent: anywhere. */
  destinations?: AgentConnectOptions['destinations'];
}

/** RFC 4733 digits the media leg can send; `w`/`W` are our pauses (0.5 s, 1 s). */
const PAUSE_MS: Record<string, number> = { w: 500, W: 1000 };
const CLOSE_TIMEOUT_MS = 1000;

export class AgentBridge implements AgentLink {
  private conn: AgentConnection | undefined;
  private media: MediaLeg | undefined;
  private hooks: AgentLinkHooks | undefined;
  private stopping: Promise<void> | undefined;
  private voicemailReported = false;
  private detector: VoicemailDetector | undefined;
  private readonly log: Logger;
  private readonly timers: Timers;
  private readonly monotonic: AgentClock;
  private readonly latency: {
    rtpToWs: LatencyHistogram;
    wsToRtp: LatencyHistogram;
    connect?: LatencyHistogram;
  };
  /** This call's WS → RTP (the connection keeps its own RTP → WS). */
  private readonly wsToRtp = new LatencyHistogram(AGENT_LATENCY_BOUNDS_MS);
  private readonly dtmfTimers = new Set<unknown>();
  private dtmfChain = 0;
  private readonly counts = { enqueueErrors: 0, dtmfErrors: 0, marksEchoed: 0, clears: 0 };

  constructor(
    private readonly record: Readonly<CallRecord>,
    private readonly agent: Agent,
    private readonly deps: AgentBridgeDeps,
  ) {
    this.log = deps.log.child({ callId: record.callId, agentId: agent.id });
    this.timers = deps.timers ?? realTimers;
    this.monotonic = deps.monotonic ?? monotonicClock;
    this.latency = deps.latency ?? {
      rtpToWs: agentRtpToWsLatency,
      wsToRtp: agentWsToRtpLatency,
      connect: agentConnectTime,
    };
  }

  async connect(): Promise<void> {
    const r = this.record;
    const dynamicVariables = stringMap(r.dynamicVariables);
    const superVariables = (r.superVariables ?? {}) as Record<string, PromptSuperVariable>;
    const contextForAi = typeof r.contextForAi === 'string' ? r.contextForAi : undefined;
    let prompt = renderPrompt(this.agent.prompt, dynamicVariables, superVariables);
    // The call's extra context goes after the agent's prompt, for this call only.
    if (contextForAi) prompt = prompt ? `${prompt}\n\n${contextForAi}` : contextForAi;
    const welcome =
      typeof r.welcomeMessageOverride === 'string'
        ? r.welcomeMessageOverride
        : this.agent.welcomeMessage;
    const connect = this.deps.connect ?? ((o) => AgentConnection.connect(o));
    const connectStart = this.monotonic.now();
    this.conn = await connect({
      url: this.agent.websocketUrl,
      callSid: r.callId,
      accountSid: r.companyId,
      audioFormat: this.agent.audioFormat,
      customParameters: dynamicVariables,
      call: {
        agentId: this.agent.id,
        agentVersion: this.agent.version,
        ...(contextForAi !== undefined ? { contextForAi } : {}),
        prompt,
        welcomeMessage: welcome,
        isWelcomeMessageAIGenerated: r.isWelcomeMessageAIGenerated === true,
        metadata: stringMap(r.metadata),
        fromNumber: typeof r.callerId === 'string' ? r.callerId : undefined,
        toNumber: r.phoneNumber,
        direction: 'outbound',
      },
      connectTimeoutMs: this.deps.connectTimeoutMs ?? 5000,
      ...(this.deps.destinations ? { destinations: this.deps.destinations } : {}),
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      clock: this.monotonic,
      ...(this.deps.headers ? { headers: this.deps.headers } : {}),
    });
    this.latency.connect?.record(this.monotonic.now() - connectStart);
    this.log.info({ audioFormat: this.agent.audioFormat }, 'agent connected');
  }

  start(media: MediaLeg, hooks: AgentLinkHooks, parameters: Record<string, string> = {}): void {
    const conn = this.conn;
    if (!conn || this.media || this.stopping) return;
    this.media = media;
    this.hooks = hooks;
    if (this.agent.outgoing.voicemailDetection) {
      this.detector = new VoicemailDetector(this.deps.voicemail);
    }
    const toAgent = new CalleeAudioConverter(conn.audioFormat);
    const fromAgent = new AgentAudioReader(conn.audioFormat);

    conn.on('audio', (a) => this.onAgentAudio(fromAgent, a));
    conn.on('mark', (name) => media.mark(name));
    conn.on('clear', () => this.onClear());
    conn.on('sendDtmf', (d) => this.sendDigits(d.digits));
    conn.on('hangup', () => {
      this.log.info('agent asked to hang up');
      this.hangup('user_hungup');
    });
    conn.on('transcript', (t) => hooks.transcript(t));
    conn.on('result', (r) => hooks.result(r));
    conn.on('voicemail', (v) => {
      hooks.voicemail(v.messageLeft ? 'message_left' : 'caller_voice_mail');
      this.log.info({ messageLeft: v.messageLeft }, 'agent reports a voicemail');
    });
    conn.on('transfer', (t) => {
      this.log.info(
        { destination: t.destination, transferMode: t.transferMode },
        'agent asks for a transfer',
      );
      // Deferred like a hangup: the session's writes must not run inside a socket callback.
      queueMicrotask(() => {
        if (!this.stopping) hooks.transfer(t);
      });
    });
    conn.on('consult', (c) => {
      this.log.info({ action: c.action }, 'agent acts on the consult');
      queueMicrotask(() => {
        if (!this.stopping) hooks.consult?.(c.action);
      });
    });
    conn.on('close', (info) => this.onClose(info));
    conn.on('error', (err) => this.log.warn({ err }, 'agent connection error'));

    media.onAudio((frame) => this.onCalleeAudio(toAgent, frame));
    media.on('mark', (name) => {
      if (this.stopping) return;
      this.counts.marksEchoed += 1;
      conn.sendMark(name);
    });
    media.on('dtmf', (e) => this.dtmf(e.digit));

    if (conn.state === 'closed') {
      // The agent left while the phone was ringing.
      this.log.warn('agent socket closed before the answer');
      this.hangup('agent_disconnected');
      return;
    }
    conn.start(parameters);
    this.log.info('agent stream started');
  }

  dtmf(digit: string): void {
    if (!this.stopping) this.conn?.sendDtmf(digit);
  }

  /** `{"event":"transfer","transfer":{"status":…}}` to the agent (docs/agent-protocol.md). */
  transferStatus(event: TransferProgressEvent): void {
    const conn = this.conn;
    if (!conn || this.stopping || conn.state === 'closed') return;
    conn.sendEvent('transfer', { ...event });
  }

  stop(): Promise<void> {
    this.stopping ??= this.close();
    return this.stopping;
  }

  private async close(): Promise<void> {
    for (const t of this.dtmfTimers) this.timers.clearTimeout(t);
    this.dtmfTimers.clear();
    const conn = this.conn;
    if (!conn) return;
    try {
      const info = await conn.stop(this.media ? (this.deps.stopGraceMs ?? 1500) : 0);
      const rtpToWs = conn.latency;
      this.log.info(
        {
          closeCode: info.code,
          counters: { ...conn.counters, ...this.counts },
          latencyMs: {
            rtpToWsP50: rtpToWs.quantile(0.5),
            rtpToWsP99: rtpToWs.quantile(0.99),
            wsToRtpP50: this.wsToRtp.quantile(0.5),
            wsToRtpP99: this.wsToRtp.quantile(0.99),
          },
        },
        'agent stream closed',
      );
    } catch (err) {
      this.log.warn({ err }, 'agent stream did not close cleanly');
    }
  }

  private onCalleeAudio(toAgent: CalleeAudioConverter, frame: ReceivedFrame): void {
    const conn = this.conn;
    if (!conn || this.stopping) return;
    const needsPcm = this.detector !== undefined || conn.audioFormat !== 'mulaw_8000';
    const pcm = needsPcm ? CalleeAudioConverter.pcm8k(frame.ulaw) : undefined;
    // The connection records this call's RTP → WS; the process-wide histogram here.
    if (conn.sendAudio(toAgent.toAgent(frame.ulaw, pcm), frame.mediaTimeMs, frame.receivedAt)) {
      this.latency.rtpToWs.record(this.monotonic.now() - frame.receivedAt);
    }
    if (this.detector && pcm) {
      for (const e of this.detector.push(pcm)) this.onVoicemailEvent(e);
      if (this.detector.done) this.detector = undefined;
    }
  }

  private onVoicemailEvent(e: VoicemailEvent): void {
    const conn = this.conn;
    if (!conn) return;
    if (e.type === 'decision') {
      this.log.info(
        { result: e.result, reason: e.reason, afterMs: e.afterMs },
        'voicemail detection',
      );
      if (e.result === 'machine' && !this.voicemailReported) {
        this.voicemailReported = true;
        this.hooks?.voicemail('caller_voice_mail');
      }
      conn.sendEvent('voicemail', {
        type: 'decision',
        result: e.result,
        reason: e.reason,
        afterMs: e.afterMs,
      });
    } else {
      this.log.info({ afterMs: e.afterMs }, 'voicemail beep');
      conn.sendEvent('voicemail', {
        type: 'beep',
        result: 'machine',
        afterMs: e.afterMs,
        frequencyHz: e.frequencyHz,
        durationMs: e.durationMs,
      });
    }
  }

  private onAgentAudio(reader: AgentAudioReader, a: AgentAudio): void {
    const media = this.media;
    if (!media || this.stopping) return;
    const converted = reader.toMedia(a.payload);
    if (!converted) return;
    try {
      media.enqueue(converted.audio, converted.sampleRate);
    } catch (err) {
      this.counts.enqueueErrors += 1;
      if (this.counts.enqueueErrors === 1) this.log.warn({ err }, 'agent audio not queued');
      return;
    }
    const ms = this.monotonic.now() - a.receivedAtMs;
    this.wsToRtp.record(ms);
    this.latency.wsToRtp.record(ms);
  }

  /** Twilio: `clear` drops the queued audio and answers every mark it dropped. */
  private onClear(): void {
    const media = this.media;
    const conn = this.conn;
    if (!media || !conn) return;
    this.counts.clears += 1;
    const { droppedMarks } = media.clear();
    for (const name of droppedMarks) conn.sendMark(name);
  }

  /** Digits for the callee; `w` / `W` wait 0.5 s / 1 s before the next ones. */
  private sendDigits(digits: string): void {
    const media = this.media;
    if (!media) return;
    let delay = 0;
    const chain = ++this.dtmfChain;
    for (const part of digits.split(/([wW])/)) {
      if (part === '') continue;
      const pause = PAUSE_MS[part];
      if (pause !== undefined) {
        delay += pause;
        continue;
      }
      const send = (): void => {
        if (this.stopping || chain !== this.dtmfChain) return;
        try {
          media.sendDtmf(part);
        } catch (err) {
          this.counts.dtmfErrors += 1;
          this.log.warn({ err }, 'agent DTMF not sent');
        }
      };
      if (delay === 0) send();
      else {
        const t = this.timers.setTimeout(() => {
          this.dtmfTimers.delete(t);
          send();
        }, delay);
        this.dtmfTimers.add(t);
      }
    }
  }

  private onClose(info: AgentCloseInfo): void {
    if (this.stopping || info.byUs) return;
    this.log.warn({ closeCode: info.code }, 'agent socket closed mid-call');
    this.hangup('agent_disconnected');
  }

  /** Deferred: the attempt's end() must not run inside a socket or media callback. */
  private hangup(reason: 'user_hungup' | 'agent_disconnected'): void {
    const hooks = this.hooks;
    if (!hooks) return;
    queueMicrotask(() => {
      if (!this.stopping) hooks.hangup(reason);
    });
  }
}

function stringMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}
