/**
 * One call's WebSocket to its AI agent. The daemon is the client.
 *
 * mulaw_8000: Twilio Media Streams JSON both ways (connected, start, media,
 * dtmf, mark, stop out; media, mark, clear in) plus our extensions in.
 * pcm_*: one text frame with the `start` message, then audio as binary frames
 * of 16-bit little-endian PCM both ways (the jambonz `listen` style); dtmf,
 * mark and stop stay JSON text frames, and so does everything the agent sends
 * besides audio.
 *
 * Frames the agent sends before `start()` are held (bounded) and delivered
 * right after it, so listeners attached between `connect()` and `start()`
 * miss nothing. Bad input is counted and dropped; nothing here throws on it.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import type { AgentDecoderCounters } from './agent-dispatch.js';
import { dispatchFrame } from './agent-dispatch.js';
import { AgentEncoder, CONNECTED_MESSAGE } from './agent-encoder.js';
import { AgentError } from './agent-error.js';
import type {
  AgentAudioFormat,
  AgentCallContext,
  AgentCloseInfo,
  AgentConnectionEvents,
} from './agent-messages.js';
import { bytesPerMsOf } from './agent-messages.js';
import { LatencyHistogram } from '../latency-histogram.js';

/** Monotonic ms. Must share its time base with the `arrivedAtMs` given to sendAudio. */
export interface AgentClock {
  now(): number;
}

/** performance.now(), the media layer's time base for `receivedAt`. */
export const monotonicClock: AgentClock = { now: () => performance.now() };

export interface AgentConnectOptions {
  /** ws:// or wss:// URL from the agent record. */
  url: string;
  /** Our call id (→ `start.callSid`). */
  callSid: string;
  /** The company id (→ `start.accountSid`). */
  accountSid: string;
  /** Default: `MZ` + 32 random hex digits, as Twilio's. */
  streamSid?: string;
  /** Default `mulaw_8000`. */
  audioFormat?: AgentAudioFormat;
  /** → `start.customParameters` (the call's dynamicVariables). Default `{}`. */
  customParameters?: Record<string, string>;
  /** → `start.call`, carried as given. Default `{}`. */
  call?: AgentCallContext;
  /** Until the WebSocket is open. Default 5000. */
  connectTimeoutMs?: number;
  /** Extra HTTP headers on the upgrade request (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Default `monotonicClock`. */
  clock?: AgentClock;
  /** Where sendAudio records RTP→WS latency; pass one to share it across calls. */
  latency?: LatencyHistogram;
  /** Audio is dropped (and counted) while the socket has more than this queued. Default 512 KiB. */
  maxBufferedBytes?: number;
  /** Largest frame accepted from the agent. Default 4 MiB. */
  maxPayloadBytes?: number;
  /** How long stop()/close() wait for the closing handshake before terminating. Default 2000. */
  closeTimeoutMs?: number;
  /** Frames held before start(); more are dropped and counted. Default 1000. */
  maxEarlyFrames?: number;
  /** Where the URL may lead (net/destination-guard.ts): IP literals checked first, names at their lookup. */
  destinations?: {
    literalRefusal(url: URL): string | undefined;
    lookup: (...args: never[]) => void;
  };
}

export interface AgentCounters extends AgentDecoderCounters {
  mediaFramesSent: number;
  audioBytesSent: number;
  /** Audio refused because the socket's send buffer was over maxBufferedBytes. */
  framesDroppedBackpressure: number;
  /** Audio refused before start() or after the socket closed. */
  framesDroppedNotOpen: number;
  /** Text messages other than media (start, dtmf, mark, stop). */
  controlMessagesSent: number;
  /** Agent frames dropped because more than maxEarlyFrames came before start(). */
  earlyFramesDropped: number;
  socketErrors: number;
  /** Event listeners that threw while handling an agent frame. */
  listenerErrors: number;
}

export type AgentConnectionState = 'open' | 'started' | 'closing' | 'closed';

const DTMF_DIGIT = /^[0-9*#A-D]$/;
const TEXT_FRAME = { binary: false } as const;
const BINARY_FRAME = { binary: true } as const;

export class AgentConnection extends EventEmitter<AgentConnectionEvents> {
  readonly streamSid: string;
  readonly audioFormat: AgentAudioFormat;
  readonly latency: LatencyHistogram;
  /** Resolves once the socket has closed, whoever closed it. */
  readonly closed: Promise<AgentCloseInfo>;

  private readonly encoder: AgentEncoder;
  private readonly clock: AgentClock;
  private readonly bytesPerMs: number;
  private readonly stats: AgentCounters = {
    mediaFramesSent: 0,
    audioBytesSent: 0,
    framesDroppedBackpressure: 0,
    framesDroppedNotOpen: 0,
    controlMessagesSent: 0,
    earlyFramesDropped: 0,
    socketErrors: 0,
    listenerErrors: 0,
    audioFramesReceived: 0,
    audioBytesReceived: 0,
    marksReceived: 0,
    clearsReceived: 0,
    extensionEventsReceived: 0,
    malformedFrames: 0,
    invalidMessages: 0,
    unknownEvents: 0,
  };
  private phase: AgentConnectionState = 'open';
  private delivering = false;
  private closingByUs = false;
  private early: { data: Buffer; isBinary: boolean }[] = [];
  private pendingClose: AgentCloseInfo | null = null;
  private audioMsSent = 0;
  private resolveClosed!: (info: AgentCloseInfo) => void;

  /**
   * Opens the WebSocket. Rejects with AgentError `agent_unreachable` when the
   * connection is refused, times out, or the server answers the upgrade with
   * anything but 101.
   */
  static connect(opts: AgentConnectOptions): Promise<AgentConnection> {
    const timeoutMs = opts.connectTimeoutMs ?? 5000;
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        const refused = opts.destinations?.literalRefusal(new URL(opts.url));
        if (refused) {
          reject(
            new AgentError('agent_unreachable', 'The agent URL points at a refused address.', {
              cause: `a ${refused} address (agent.allowedNetworks)`,
            }),
          );
          return;
        }
        ws = new WebSocket(opts.url, {
          ...(opts.destinations ? { lookup: opts.destinations.lookup as never } : {}),
          headers: opts.headers,
          handshakeTimeout: timeoutMs,
          maxPayload: opts.maxPayloadBytes ?? 4 * 1024 * 1024,
          perMessageDeflate: false,
          // Text frames are decoded and validated as JSON anyway (bad UTF-8 fails there).
          skipUTF8Validation: true,
        });
      } catch (err) {
        reject(new AgentError('agent_unreachable', 'Invalid agent URL.', { cause: errText(err) }));
        return;
      }
      let settled = false;
      const fail = (message: string, details: Record<string, unknown>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.terminate();
        reject(new AgentError('agent_unreachable', message, details));
      };
      const timer = setTimeout(
        () => fail('Agent did not accept the WebSocket in time.', { timeoutMs }),
        timeoutMs,
      );
      ws.on('error', (err) => fail('Agent WebSocket connection failed.', { cause: errText(err) }));
      ws.once('unexpected-response', (_req, res) => {
        res.resume();
        fail('Agent answered the WebSocket upgrade with an HTTP error.', {
          httpStatus: res.statusCode,
        });
      });
      ws.once('open', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.removeAllListeners('error');
        resolve(new AgentConnection(ws, opts));
      });
    });
  }

  private constructor(
    private readonly ws: WebSocket,
    private readonly opts: AgentConnectOptions,
  ) {
    super();
    this.streamSid = opts.streamSid ?? `MZ${randomBytes(16).toString('hex')}`;
    this.audioFormat = opts.audioFormat ?? 'mulaw_8000';
    this.bytesPerMs = bytesPerMsOf(this.audioFormat);
    this.latency = opts.latency ?? new LatencyHistogram();
    this.clock = opts.clock ?? monotonicClock;
    this.encoder = new AgentEncoder({
      accountSid: opts.accountSid,
      callSid: opts.callSid,
      streamSid: this.streamSid,
    });
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onFrame(data, isBinary));
    ws.on('error', (err) => this.onSocketError(err));
    ws.on('close', (code: number, reason: Buffer) => this.onClose(code, reason.toString('utf8')));
  }

  get state(): AgentConnectionState {
    return this.phase;
  }

  /** A copy of the counters. */
  get counters(): AgentCounters {
    return { ...this.stats };
  }

  /** Milliseconds of audio sent so far (the default media timestamp). */
  get sentAudioMs(): number {
    return this.audioMsSent;
  }

  /**
   * Sends `connected` + `start` (μ-law) or the `start` text frame (PCM), then
   * delivers what the agent sent meanwhile. Once only.
   */
  /** Sends `start` (with `parameters` beside the call's customParameters; the call's win a clash). */
  start(parameters: Record<string, string> = {}): void {
    if (this.phase !== 'open') return;
    this.phase = 'started';
    const start = this.encoder.start({
      audioFormat: this.audioFormat,
      customParameters: { ...parameters, ...this.opts.customParameters },
      call: this.opts.call ?? {},
    });
    if (this.audioFormat === 'mulaw_8000') this.sendControl(CONNECTED_MESSAGE);
    this.sendControl(start);
    this.deliverEarly();
  }

  /**
   * Sends one frame of the callee's audio: μ-law bytes (mulaw_8000) or PCM
   * s16le (pcm_*, a Buffer or an Int16Array at the agent's rate).
   * `mediaTimestampMs` is ms since the stream started (default: the audio
   * sent so far, which stays steady as long as silence is sent too).
   * `arrivedAtMs` (on this connection's clock) records RTP→WS latency.
   * Returns false when the frame was dropped (not started, closed, backlog).
   */
  sendAudio(
    audio: Buffer | Int16Array | Uint8Array,
    mediaTimestampMs?: number,
    arrivedAtMs?: number,
  ): boolean {
    if (this.phase !== 'started' || this.ws.readyState !== WebSocket.OPEN) {
      this.stats.framesDroppedNotOpen += 1;
      return false;
    }
    if (this.ws.bufferedAmount > (this.opts.maxBufferedBytes ?? 512 * 1024)) {
      this.stats.framesDroppedBackpressure += 1;
      return false;
    }
    const bytes = Buffer.isBuffer(audio)
      ? audio
      : Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength);
    const timestamp = mediaTimestampMs ?? this.audioMsSent;
    // A Buffer lets ws write the masked frame with its header in one write
    // (a string costs a copy, then a cork/writev of header and payload).
    if (this.audioFormat === 'mulaw_8000') {
      this.ws.send(Buffer.from(this.encoder.media(bytes, timestamp)), TEXT_FRAME);
    } else this.ws.send(bytes, BINARY_FRAME);
    this.audioMsSent += bytes.length / this.bytesPerMs;
    this.stats.mediaFramesSent += 1;
    this.stats.audioBytesSent += bytes.length;
    if (arrivedAtMs !== undefined) this.latency.record(this.clock.now() - arrivedAtMs);
    return true;
  }

  /** Tells the agent the callee pressed a key (one of 0-9 * # A-D). */
  sendDtmf(digit: string): boolean {
    if (!DTMF_DIGIT.test(digit)) return false;
    return this.sendIfStarted(() => this.encoder.dtmf(digit));
  }

  /** Echoes the agent's mark: the audio queued before it has played (or was cleared). */
  sendMark(name: string): boolean {
    return this.sendIfStarted(() => this.encoder.mark(name));
  }

  /**
   * Sends one of our extension events (e.g. `voicemail`), in the Twilio JSON
   * style with `sequenceNumber` and `streamSid`. Agents that do not know it
   * ignore it. False unless started and open.
   */
  sendEvent(name: string, payload: Record<string, unknown>): boolean {
    return this.sendIfStarted(() => this.encoder.event(name, payload));
  }

  /**
   * Sends `stop`, then closes with 1000. Resolves when the socket has closed.
   * With `graceMs`, the agent gets that long after `stop` to send its last
   * frames (a `result`, a transcript) and close by itself before we close.
   */
  async stop(graceMs = 0): Promise<AgentCloseInfo> {
    if (this.phase === 'started') {
      this.sendIfStarted(() => this.encoder.stop());
      if (graceMs > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          this.closed,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
    }
    return this.close(1000, 'stop');
  }

  /** Closes without `stop` (e.g. the call failed). Resolves when the socket has closed. */
  close(code = 1000, reason = ''): Promise<AgentCloseInfo> {
    if (this.phase !== 'closed' && this.phase !== 'closing') {
      this.phase = 'closing';
      this.closingByUs = true;
      this.ws.close(code, reason);
      const timer = setTimeout(() => this.ws.terminate(), this.opts.closeTimeoutMs ?? 2000);
      void this.closed.then(() => clearTimeout(timer));
    }
    this.deliverEarly();
    return this.closed;
  }

  private sendIfStarted(build: () => string): boolean {
    if (this.phase !== 'started' || this.ws.readyState !== WebSocket.OPEN) return false;
    this.sendControl(build());
    return true;
  }

  private sendControl(text: string): void {
    this.ws.send(text);
    this.stats.controlMessagesSent += 1;
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (!this.delivering) {
      if (this.early.length >= (this.opts.maxEarlyFrames ?? 1000)) {
        this.stats.earlyFramesDropped += 1;
      } else {
        this.early.push({ data, isBinary });
      }
      return;
    }
    this.dispatch(data, isBinary, this.clock.now());
  }

  /** A listener that throws must not take the socket loop down: count it, report it. */
  private dispatch(data: Buffer, isBinary: boolean, receivedAtMs: number): void {
    try {
      dispatchFrame(this, this.stats, this.audioFormat, data, isBinary, receivedAtMs);
    } catch (err) {
      this.stats.listenerErrors += 1;
      if (this.listenerCount('error') > 0) {
        this.emit('error', err instanceof Error ? err : new Error(String(err)));
      }
    }
  }

  private deliverEarly(): void {
    if (this.delivering) return;
    this.delivering = true;
    const early = this.early;
    this.early = [];
    const now = this.clock.now();
    for (const f of early) this.dispatch(f.data, f.isBinary, now);
    if (this.pendingClose) this.emit('close', this.pendingClose);
  }

  private onSocketError(err: Error): void {
    this.stats.socketErrors += 1;
    if (this.listenerCount('error') > 0) {
      this.emit(
        'error',
        new AgentError('agent_connection_lost', 'Agent WebSocket failed.', {
          cause: errText(err),
        }),
      );
    }
  }

  private onClose(code: number, reason: string): void {
    this.phase = 'closed';
    const info: AgentCloseInfo = { code, reason, byUs: this.closingByUs };
    this.resolveClosed(info);
    if (this.delivering) this.emit('close', info);
    else this.pendingClose = info;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
