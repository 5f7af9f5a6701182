/**
 * One call's media session on the worker thread, as the main thread holds
 * it (see worker-media-engine.ts): the MediaSession API, minus counters.
 * Offer/answer runs here on the engine's settings; audio, marks, clears and
 * digits are queued to the worker in order; what the worker reports (frames,
 * marks, digits, stats, inactivity) comes back through the engine.
 */
import { EventEmitter } from 'node:events';
import { AgentAudioEncoder } from '../agent-audio-encoder.js';
import type { MediaCloseResult, MediaSessionEvents, NetworkQuality } from '../media-types.js';
import type { ClearResult } from '../playout-queue.js';
import type { SdesOfferKeys } from '../sdes-offer-keys.js';
import type { NegotiatedMedia, SrtpMode } from '../sdp-types.js';
import { SessionSdp } from '../session-sdp.js';
import { checkDtmfRequest } from '../telephone-event-sender.js';
import type { PackedFrame } from './media-worker-protocol.js';
import type { WorkerMediaEngine } from './worker-media-engine.js';

const FRAME_MS = 20;

/** A received frame as the main thread sees it (`ulaw` views the batch it came in). */
export interface ReceivedFrame {
  ulaw: Buffer;
  mediaTimeMs: number;
  receivedAt: number;
}

const NO_QUALITY: NetworkQuality = {
  packetsReceived: 0,
  packetsLost: 0,
  lossPct: 0,
  packetsOutOfOrder: 0,
  jitterMs: 0,
};

export class RemoteMediaSession extends EventEmitter<MediaSessionEvents> {
  private readonly sdp: SessionSdp;
  private readonly encoder = new AgentAudioEncoder();
  private negotiated: NegotiatedMedia | null = null;
  private audioHandler: (frame: ReceivedFrame) => void = () => {};
  private readonly frame: ReceivedFrame = { ulaw: Buffer.alloc(0), mediaTimeMs: 0, receivedAt: 0 };
  private latest: NetworkQuality = NO_QUALITY;
  /** Marks sent to the worker and not yet reported played, in order. */
  private marks: string[] = [];
  /** The worker's queue as of its last frame, plus what we queued since. */
  private queuedBytes = 0;
  private readonly maxQueuedBytes: number;
  private closed: Promise<MediaCloseResult> | null = null;
  private resolveClose: ((r: MediaCloseResult) => void) | null = null;

  constructor(
    private readonly engine: WorkerMediaEngine,
    private readonly id: number,
    readonly localPort: number,
    readonly localAddress: string,
    srtp: { mode: SrtpMode; keys: SdesOfferKeys | null } = { mode: 'rtp', keys: null },
  ) {
    super();
    const c = engine.config;
    this.sdp = new SessionSdp({
      address: localAddress,
      port: localPort,
      codecs: c.codecs,
      telephoneEventPayloadType: c.telephoneEventPayloadType,
      ptime: FRAME_MS,
      offerRtcpMux: c.offerRtcpMux,
      srtp: srtp.mode,
      sdesKeys: srtp.keys,
    });
    this.maxQueuedBytes = Math.round(c.playoutQueueMaxMs * 8);
  }

  get media(): Readonly<NegotiatedMedia> | null {
    return this.negotiated;
  }

  createOffer(): string {
    return this.sdp.offer();
  }

  /** As MediaSession's; the worker repeats the SDES negotiation with the same keys. */
  applyAnswer(sdp: string): NegotiatedMedia {
    const n = this.sdp.readAnswer(sdp);
    this.negotiated = n.media;
    this.engine.queue(['answer', this.id, sdp]);
    return n.media;
  }

  answerOffer(sdp: string): string {
    const n = this.sdp.readOffer(sdp);
    this.negotiated = n.media;
    this.engine.queue(['offer', this.id, sdp]);
    return this.sdp.answer(n);
  }

  /** Every received audio frame; the object is reused (copy what you keep). */
  onAudio(handler: (frame: ReceivedFrame) => void): void {
    this.audioHandler = handler;
  }

  enqueue(audio: Uint8Array | Int16Array, sampleRate = 8000): number {
    if (this.closed) return 0;
    const ulaw = this.encoder.toUlaw(audio, sampleRate);
    const take = Math.max(0, Math.min(ulaw.length, this.maxQueuedBytes - this.queuedBytes));
    if (take === 0) return 0;
    this.queuedBytes += take;
    this.engine.queueAudio(this.id, take === ulaw.length ? ulaw : ulaw.subarray(0, take));
    return take / 8;
  }

  mark(name: string): void {
    if (this.closed) return;
    this.marks.push(name);
    this.engine.queue(['mark', this.id, name]);
  }

  clear(): ClearResult {
    const result = { droppedMs: this.queuedBytes / 8, droppedMarks: this.marks };
    this.marks = [];
    this.queuedBytes = 0;
    if (!this.closed) this.engine.queue(['clear', this.id]);
    return result;
  }

  get queuedMs(): number {
    return this.queuedBytes / 8;
  }

  sendDtmf(digits: string): void {
    checkDtmfRequest(this.negotiated?.telephoneEventPayloadType ?? null, digits);
    this.engine.queue(['dtmf', this.id, digits]);
  }

  /** The latest figures the worker reported (every statsIntervalMs; final ones from close). */
  stats(): NetworkQuality {
    return this.latest;
  }

  close(reason = 'call ended'): Promise<MediaCloseResult> {
    if (this.closed) return this.closed;
    this.audioHandler = () => {};
    this.closed = new Promise((resolve) => (this.resolveClose = resolve));
    if (this.engine.failure) this.onWorkerGone();
    else this.engine.closeSession(this.id, reason);
    return this.closed;
  }

  // ---- from the worker ----

  onWorkerFrame(f: PackedFrame): void {
    this.queuedBytes = f.queuedBytes;
    const frame = this.frame;
    frame.ulaw = f.ulaw;
    frame.mediaTimeMs = f.mediaTimeMs;
    frame.receivedAt = f.receivedAt;
    this.audioHandler(frame);
  }

  onWorkerEvent(name: string, data: unknown): void {
    switch (name) {
      case 'mark':
        // a mark dropped by clear() may still have been played: report only pending ones
        if (this.marks[0] === data) {
          this.marks.shift();
          this.emit('mark', data as string);
        }
        break;
      case 'stats':
        this.latest = data as NetworkQuality;
        this.emit('stats', this.latest);
        break;
      case 'dtmf':
        this.emit('dtmf', data as MediaSessionEvents['dtmf'][0]);
        break;
      case 'inactive':
        this.emit('inactive', data as MediaSessionEvents['inactive'][0]);
        break;
      case 'latched':
        this.emit('latched', data as MediaSessionEvents['latched'][0]);
        break;
    }
  }

  onClosed(result: MediaCloseResult): void {
    this.latest = result.networkQuality;
    this.resolveClose?.(result);
  }

  /** The worker is gone: the call cannot have media any more. */
  onWorkerGone(): void {
    const result: MediaCloseResult = {
      networkQuality: this.latest,
      counters: EMPTY_COUNTERS,
      recording: null,
    };
    if (this.resolveClose) this.resolveClose(result);
    else this.emit('inactive', { silentForMs: 0 });
  }
}

const EMPTY_COUNTERS: MediaCloseResult['counters'] = {
  packetsSent: 0,
  octetsSent: 0,
  audioFramesSent: 0,
  dtmfPacketsSent: 0,
  packetsReceived: 0,
  packetsDuplicated: 0,
  malformedPackets: 0,
  foreignPackets: 0,
  unknownPayloadType: 0,
  rtcpSent: 0,
  rtcpReceived: 0,
  queuedMs: 0,
  overflowMs: 0,
  rttMs: -1,
  sendErrors: 0,
  packetsBeforeKeys: 0,
};
