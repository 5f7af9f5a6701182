import { randomInt } from 'node:crypto';
import type { RemoteInfo, Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import { ALAW_TO_ULAW, decodeAlaw, decodeUlaw, encodeUlaw, transcode } from './g711.js';
import type { MediaClock } from './media-clock.js';
import { MediaError } from './media-error.js';
import type {
  MediaCloseResult,
  MediaCounters,
  MediaSessionEvents,
  NetworkQuality,
  ReceivedAudioFrame,
} from './media-types.js';
import type { PacingClock, PacingHandle } from './pacing-clock.js';
import { PlayoutQueue, type ClearResult } from './playout-queue.js';
import { ReceiveStatistics } from './receive-statistics.js';
import { Resampler } from './resampler.js';
import { RtcpSessionState } from './rtcp-session-state.js';
import { FRAME_SAMPLES, RtpFrameBuilder } from './rtp-frame-builder.js';
import { createRtpHeader, isRtcpInMux, parseRtpPacket, RTP_HEADER_SIZE } from './rtp-packet.js';
import { RtpTransmitter } from './rtp-transmitter.js';
import { negotiateRemoteSdp, writeLocalSdp } from './sdp-negotiation.js';
import type { AudioCodecName, MediaDirection, NegotiatedMedia } from './sdp-types.js';
import { dtmfEventToDigit, parseTelephoneEvent } from './telephone-event.js';
import { TelephoneEventReceiver } from './telephone-event-receiver.js';
import { TelephoneEventSender } from './telephone-event-sender.js';
import type { WavRecorder } from './wav-recorder.js';

/** Per-session settings; the engine fills them from its config. */
export interface MediaSessionSettings {
  advertisedAddress: string;
  codecs: readonly AudioCodecName[];
  telephoneEventPayloadType: number | null;
  offerRtcpMux: boolean;
  symmetricRtp: boolean;
  inactivityTimeoutSec: number;
  rtcpIntervalMs: number;
  statsIntervalMs: number;
  playoutQueueMaxMs: number;
  dtmfDurationMs: number;
  dtmfGapMs: number;
  cname: string;
}

export interface MediaSessionResources {
  port: number;
  rtp: Socket;
  rtcp: Socket;
  pacing: PacingClock;
  clock: MediaClock;
  recorder: WavRecorder | null;
  release: () => void;
}

/**
 * One call's RTP/RTCP session on a bound port pair. Sends one packet per
 * frame on the shared pacing clock (agent audio, silence, or RFC 4733
 * events), receives and accounts the far end's packets, and hands each
 * audio frame to the handler set with `onAudio`.
 */
export class MediaSession extends EventEmitter<MediaSessionEvents> {
  readonly localPort: number;
  readonly localAddress: string;
  /** RFC 3550 §8: random SSRC; sequence number and timestamp start random too (§5.1). */
  readonly ssrc = randomInt(1, 0xffffffff) >>> 0;
  private readonly settings: MediaSessionSettings;
  private readonly r: MediaSessionResources;
  private readonly sessionId = String(randomInt(1, 2 ** 47));
  private sessionVersion = 0;
  private negotiated: NegotiatedMedia | null = null;
  private readonly tx: RtpTransmitter;
  private rtcpAddress = '';
  private rtcpPort = 0;

  // sending
  private readonly queue: PlayoutQueue;
  private readonly dtmfOut: TelephoneEventSender;
  private readonly frames: RtpFrameBuilder;
  private readonly tsBase = randomInt(0, 0xffffffff) >>> 0;
  private startFrame = -1;
  private lastTimestamp = 0;
  private readonly resamplers = new Map<number, Resampler>();
  private nearPcm: Int16Array | null = null;
  private packetsSent = 0;
  private octetsSent = 0;
  private audioFramesSent = 0;
  private dtmfPacketsSent = 0;

  // receiving
  private readonly header = createRtpHeader();
  private rxStats = new ReceiveStatistics();
  private remoteSsrc = -1;
  private firstRxTimestamp = 0;
  private readonly rxEventPayloadTypes = new Set<number>();
  private readonly dtmfIn = new TelephoneEventReceiver();
  private audioHandler: (frame: ReceivedAudioFrame) => void = () => {};
  private readonly frame: ReceivedAudioFrame = {
    payload: Buffer.alloc(0),
    ulaw: Buffer.alloc(0),
    codec: 'PCMU',
    sequenceNumber: 0,
    timestamp: 0,
    mediaTimeMs: 0,
    marker: false,
    receivedAt: 0,
  };
  private lastRxAt: number;
  private inactiveReported = false;
  private malformed = 0;
  private unknownPayloadType = 0;

  private readonly rtcpState: RtcpSessionState;
  private readonly rtcpBuf = Buffer.alloc(1500);
  private rtcpSent = 0;
  private nextRtcpAt = 0;
  private nextStatsAt = 0;
  private pacingHandle: PacingHandle | null;
  private closed: Promise<MediaCloseResult> | null = null;

  constructor(settings: MediaSessionSettings, resources: MediaSessionResources) {
    super();
    this.settings = settings;
    this.r = resources;
    this.localPort = resources.port;
    this.localAddress = settings.advertisedAddress;
    this.tx = new RtpTransmitter(resources.rtp, settings.symmetricRtp);
    this.queue = new PlayoutQueue(Math.round(settings.playoutQueueMaxMs * 8));
    const frameMs = resources.pacing.frameMs;
    this.dtmfOut = new TelephoneEventSender(
      Math.max(1, Math.round(settings.dtmfDurationMs / frameMs)),
      Math.max(1, Math.round(settings.dtmfGapMs / frameMs)),
      FRAME_SAMPLES,
    );
    this.frames = new RtpFrameBuilder(this.ssrc, randomInt(0, 0x10000), this.queue, this.dtmfOut);
    this.rtcpState = new RtcpSessionState(settings.cname);
    this.lastRxAt = resources.clock.now();
    if (settings.telephoneEventPayloadType !== null) {
      this.rxEventPayloadTypes.add(settings.telephoneEventPayloadType);
    }
    resources.rtp.on('message', this.onRtpDatagram);
    resources.rtcp.on('message', this.onRtcpDatagram);
    const onError = (err: Error): void => {
      this.tx.sendErrors++;
      if (this.listenerCount('error') > 0) this.emit('error', err);
    };
    resources.rtp.on('error', onError);
    resources.rtcp.on('error', onError);
    this.pacingHandle = resources.pacing.add(this);
  }

  // ---- offer / answer ----

  /** The negotiated media, once an answer or offer has been applied. */
  get media(): Readonly<NegotiatedMedia> | null {
    return this.negotiated;
  }

  /** Our SDP offer (codecs and order from config, ptime 20, telephone-event). */
  createOffer(): string {
    return writeLocalSdp({
      address: this.localAddress,
      port: this.localPort,
      codecs: this.settings.codecs,
      telephoneEventPayloadType: this.settings.telephoneEventPayloadType,
      ptime: this.r.pacing.frameMs,
      rtcpMux: this.settings.offerRtcpMux,
      direction: 'sendrecv',
      sessionId: this.sessionId,
      sessionVersion: this.sessionVersion++,
    });
  }

  /** Applies the far end's answer to our offer. Throws MediaError (the four SDP codes). */
  applyAnswer(sdp: string): NegotiatedMedia {
    const n = negotiateRemoteSdp(sdp, 'answer', {
      codecs: this.settings.codecs,
      telephoneEvents: this.settings.telephoneEventPayloadType !== null,
      rtcpMux: this.settings.offerRtcpMux,
    });
    this.apply(n);
    return n;
  }

  /**
   * Answers an offer from the far end (a re-INVITE: hold, new address or
   * port, codec change). Returns our SDP answer; throws MediaError when
   * nothing in the offer is acceptable (the session keeps its old media).
   */
  answerOffer(sdp: string): string {
    const n = negotiateRemoteSdp(sdp, 'offer', {
      codecs: this.settings.codecs,
      telephoneEvents: this.settings.telephoneEventPayloadType !== null,
      rtcpMux: true,
    });
    this.apply(n);
    const local = {
      address: this.localAddress,
      port: this.localPort,
      codecs: this.settings.codecs,
      telephoneEventPayloadType: n.telephoneEventPayloadType,
      ptime: this.r.pacing.frameMs,
      rtcpMux: n.rtcpMux,
      direction: n.direction,
      sessionId: this.sessionId,
      sessionVersion: this.sessionVersion++,
    };
    return writeLocalSdp(local, n);
  }

  private apply(n: NegotiatedMedia): void {
    const prev = this.negotiated;
    const moved =
      !prev || prev.remoteAddress !== n.remoteAddress || prev.remotePort !== n.remotePort;
    this.negotiated = n;
    if (moved) {
      // a new far-end address: send there, and latch again on whoever sends
      this.tx.retarget(n.remoteAddress, n.remotePort);
      this.rtcpAddress = n.rtcpMux ? n.remoteAddress : n.remoteRtcpAddress;
      this.rtcpPort = n.rtcpMux ? n.remotePort : n.remoteRtcpPort;
    }
    const te = n.telephoneEventPayloadType;
    if (te !== null) this.rxEventPayloadTypes.add(te);
    const now = this.r.clock.now();
    if (!prev || moved || prev.direction !== n.direction) {
      this.lastRxAt = now; // inactivity counts from the new media
      this.inactiveReported = false;
    }
    if (this.nextRtcpAt === 0) this.nextRtcpAt = now + this.rtcpInterval();
    if (this.nextStatsAt === 0) this.nextStatsAt = now + this.settings.statsIntervalMs;
  }

  private get direction(): MediaDirection {
    return this.negotiated?.direction ?? 'inactive';
  }

  // ---- the agent side ----

  /**
   * Sets the handler that receives every audio frame (one handler; the hot
   * path). The frame object and its buffers are reused: copy what you keep.
   */
  onAudio(handler: (frame: ReceivedAudioFrame) => void): void {
    this.audioHandler = handler;
  }

  /**
   * Queues audio for sending: μ-law 8 kHz bytes (a Uint8Array/Buffer, kept
   * by reference), or 16-bit PCM (an Int16Array) at 8, 16 or 24 kHz.
   * Returns the milliseconds accepted (less than given when the queue is full).
   */
  enqueue(audio: Uint8Array | Int16Array, sampleRate = 8000): number {
    if (!(audio instanceof Int16Array)) return this.queue.push(audio) / 8;
    let pcm = audio;
    if (sampleRate !== 8000) {
      let rs = this.resamplers.get(sampleRate);
      if (!rs) {
        if (sampleRate !== 16000 && sampleRate !== 24000) {
          throw new MediaError('unsupported_audio_format', `PCM at ${sampleRate} Hz`);
        }
        rs = new Resampler(sampleRate, 8000);
        this.resamplers.set(sampleRate, rs);
      }
      pcm = rs.process(audio);
    }
    const ulaw = Buffer.allocUnsafe(pcm.length);
    encodeUlaw(pcm, ulaw);
    return this.queue.push(ulaw) / 8;
  }

  /** Reports `name` with a 'mark' event once the audio queued so far has been sent. */
  mark(name: string): void {
    this.queue.mark(name);
  }

  /** Drops all queued audio at once; returns what was dropped, marks included. */
  clear(): ClearResult {
    return this.queue.clear();
  }

  /** Milliseconds of agent audio waiting to be sent. */
  get queuedMs(): number {
    return this.queue.queuedBytes / 8;
  }

  /** Sends DTMF digits as RFC 4733 events (0-9 * # A-D). */
  sendDtmf(digits: string): void {
    if (this.negotiated?.telephoneEventPayloadType == null) {
      throw new MediaError('dtmf_not_negotiated', 'the far end did not accept telephone-event');
    }
    try {
      this.dtmfOut.enqueue(digits);
    } catch (cause) {
      throw new MediaError('invalid_dtmf_digit', 'not a DTMF digit', { cause });
    }
  }

  // ---- statistics ----

  /** The call record's networkQuality, spec shape. */
  stats(): NetworkQuality {
    const rx = this.rxStats.counters();
    const q: NetworkQuality = {
      packetsReceived: rx.packetsReceived,
      packetsLost: rx.packetsLost,
      lossPct: Math.round(rx.lossPct * 100) / 100,
      packetsOutOfOrder: rx.packetsOutOfOrder,
      jitterMs: Math.round(rx.jitterMs * 100) / 100,
    };
    const far = this.rtcpState.farEnd;
    if (far) q.farEnd = far;
    return q;
  }

  counters(): MediaCounters {
    const rx = this.rxStats.counters();
    return {
      packetsSent: this.packetsSent,
      octetsSent: this.octetsSent,
      audioFramesSent: this.audioFramesSent,
      dtmfPacketsSent: this.dtmfPacketsSent,
      packetsReceived: rx.packetsReceived,
      packetsDuplicated: rx.packetsDuplicated,
      malformedPackets: this.malformed + this.rtcpState.malformed,
      foreignPackets: this.tx.foreignPackets,
      unknownPayloadType: this.unknownPayloadType,
      rtcpSent: this.rtcpSent,
      rtcpReceived: this.rtcpState.reportsReceived,
      queuedMs: this.queue.queuedBytes / 8,
      overflowMs: this.queue.overflowBytes / 8,
      rttMs: this.rtcpState.rttMs,
      sendErrors: this.tx.sendErrors,
    };
  }

  // ---- sending: one call per frame from the pacing clock ----

  onPacingTick(frame: number): void {
    if (this.startFrame < 0) this.startFrame = frame;
    const ts = (this.tsBase + (frame - this.startFrame) * FRAME_SAMPLES) >>> 0;
    this.lastTimestamp = ts;
    if ((frame & 15) === 0) this.housekeeping();
    const n = this.negotiated;
    if (!n) return;
    if (n.direction !== 'sendrecv' && n.direction !== 'sendonly') {
      this.frames.skip(ts); // on hold: time passes, nothing is sent
    } else {
      const alaw = n.codec === 'PCMA';
      const f = this.frames.build(ts, n.payloadType, alaw, n.telephoneEventPayloadType);
      this.tx.send(f.packet);
      this.packetsSent++;
      this.octetsSent += f.packet.length - RTP_HEADER_SIZE;
      if (f.isEvent) this.dtmfPacketsSent++;
      else if (f.audioBytes > 0) this.audioFramesSent++;
      if (this.r.recorder && !f.isEvent) this.recordNear(f.packet, alaw);
    }
    if (this.queue.pendingMarks > 0) {
      const due = this.queue.takeDueMarks();
      if (due) for (const name of due) this.emit('mark', name);
    }
  }

  private recordNear(packet: Buffer, alaw: boolean): void {
    const pcm = (this.nearPcm ??= new Int16Array(FRAME_SAMPLES));
    const payload = packet.subarray(RTP_HEADER_SIZE);
    if (alaw) decodeAlaw(payload, pcm);
    else decodeUlaw(payload, pcm);
    this.r.recorder!.near(pcm);
  }

  private rtcpInterval(): number {
    // RFC 3550 §6.3.1: randomise over [0.5, 1.5] × the interval
    return this.settings.rtcpIntervalMs * (0.5 + Math.random());
  }

  private housekeeping(): void {
    if (!this.negotiated) return;
    const now = this.r.clock.now();
    if (now >= this.nextRtcpAt) {
      this.nextRtcpAt = now + this.rtcpInterval();
      this.sendRtcp();
    }
    if (now >= this.nextStatsAt) {
      this.nextStatsAt = now + this.settings.statsIntervalMs;
      this.emit('stats', this.stats());
    }
    const expectRtp = this.direction === 'sendrecv' || this.direction === 'recvonly';
    const timeoutMs = this.settings.inactivityTimeoutSec * 1000;
    if (expectRtp && timeoutMs > 0 && !this.inactiveReported && now - this.lastRxAt >= timeoutMs) {
      this.inactiveReported = true;
      this.emit('inactive', { silentForMs: now - this.lastRxAt });
    }
  }

  private sendRtcp(bye?: string): void {
    const n = this.negotiated;
    if (!n) return;
    const sender =
      this.packetsSent > 0
        ? {
            ssrc: this.ssrc,
            rtpTimestamp: this.lastTimestamp,
            packetCount: this.packetsSent >>> 0,
            octetCount: this.octetsSent >>> 0,
          }
        : null;
    const rx = this.remoteSsrc >= 0 ? { stats: this.rxStats, ssrc: this.remoteSsrc } : null;
    const { clock } = this.r;
    const len = this.rtcpState.writeReport(
      this.rtcpBuf,
      clock.now(),
      clock.wallNow(),
      sender,
      this.ssrc,
      rx,
      bye,
    );
    const packet = Buffer.from(this.rtcpBuf.subarray(0, len)); // the buffer is reused
    if (n.rtcpMux) this.tx.send(packet);
    else this.r.rtcp.send(packet, this.rtcpPort, this.rtcpAddress);
    this.rtcpSent++;
  }

  // ---- receiving ----

  private readonly onRtpDatagram = (msg: Buffer, rinfo: RemoteInfo): void => {
    const n = this.negotiated;
    if (n?.rtcpMux && isRtcpInMux(msg)) {
      this.onRtcpDatagram(msg, rinfo);
      return;
    }
    const h = this.header;
    if (!parseRtpPacket(msg, h)) {
      this.malformed++;
      return;
    }
    if (n) {
      const source = this.tx.accept(rinfo);
      if (source === 'foreign') return;
      if (source === 'latched') {
        if (!n.rtcpMux && this.rtcpAddress === n.remoteRtcpAddress)
          this.rtcpAddress = rinfo.address;
        this.emit('latched', { address: rinfo.address, port: rinfo.port });
      }
    }
    const now = this.r.clock.now();
    if (h.ssrc !== this.remoteSsrc) {
      if (this.remoteSsrc >= 0) this.rxStats = new ReceiveStatistics(); // §8.2: a new source
      this.remoteSsrc = h.ssrc;
      this.firstRxTimestamp = h.timestamp;
    }
    const pt = h.payloadType;
    const isEvent = this.rxEventPayloadTypes.has(pt);
    if (!isEvent && pt !== 0 && pt !== 8) {
      this.unknownPayloadType++;
      return;
    }
    if (!this.rxStats.onPacket(h.sequenceNumber, now, isEvent ? undefined : h.timestamp)) return;
    this.lastRxAt = now;
    this.inactiveReported = false;
    if (isEvent) this.onTelephoneEvent(msg);
    else this.onAudioPacket(msg, pt === 8, now);
  };

  private onTelephoneEvent(msg: Buffer): void {
    const h = this.header;
    const ev = parseTelephoneEvent(msg, h.payloadOffset, h.payloadLength);
    const fresh = ev && this.dtmfIn.onPacket(h.timestamp, ev.event);
    const digit = fresh ? dtmfEventToDigit(fresh.event) : undefined;
    if (fresh && digit) this.emit('dtmf', { digit, event: fresh.event, timestamp: h.timestamp });
  }

  private onAudioPacket(msg: Buffer, pcma: boolean, now: number): void {
    const h = this.header;
    const payload = msg.subarray(h.payloadOffset, h.payloadOffset + h.payloadLength);
    let ulaw = payload;
    if (pcma) {
      ulaw = Buffer.allocUnsafe(payload.length);
      transcode(ALAW_TO_ULAW, payload, ulaw);
    }
    if (this.r.recorder) {
      const pcm = new Int16Array(payload.length);
      if (pcma) decodeAlaw(payload, pcm);
      else decodeUlaw(payload, pcm);
      this.r.recorder.far(pcm);
    }
    // one frame object per session, refilled per packet: valid during the call only
    const f = this.frame;
    f.payload = payload;
    f.ulaw = ulaw;
    f.codec = pcma ? 'PCMA' : 'PCMU';
    f.sequenceNumber = this.rxStats.extendedHighestSeq;
    f.timestamp = h.timestamp;
    f.mediaTimeMs = (((h.timestamp - this.firstRxTimestamp) >>> 0) / 8) | 0;
    f.marker = h.marker;
    f.receivedAt = now;
    this.audioHandler(f);
  }

  private readonly onRtcpDatagram = (msg: Buffer, rinfo: RemoteInfo): void => {
    const n = this.negotiated;
    if (!n) return;
    const { clock } = this.r;
    if (!this.rtcpState.onPacket(msg, clock.now(), clock.wallNow(), this.ssrc)) return;
    if (this.settings.symmetricRtp && !n.rtcpMux) {
      this.rtcpAddress = rinfo.address;
      this.rtcpPort = rinfo.port;
    }
  };

  // ---- the end ----

  /**
   * Ends the session: RTCP BYE, sockets closed, port released, recording
   * finished. Idempotent; resolves with the final statistics.
   */
  close(reason = 'call ended'): Promise<MediaCloseResult> {
    if (this.closed) return this.closed;
    if (this.pacingHandle) this.r.pacing.remove(this.pacingHandle);
    this.pacingHandle = null;
    try {
      this.sendRtcp(reason);
    } catch {
      this.tx.sendErrors++;
    }
    this.audioHandler = () => {};
    this.r.rtp.off('message', this.onRtpDatagram);
    this.r.rtcp.off('message', this.onRtcpDatagram);
    this.closed = this.finish();
    return this.closed;
  }

  private async finish(): Promise<MediaCloseResult> {
    const result = { networkQuality: this.stats(), counters: this.counters() };
    await new Promise<void>((resolve) => setImmediate(resolve)); // let the BYE leave
    await Promise.all([closeSocket(this.r.rtp), closeSocket(this.r.rtcp)]);
    this.r.release();
    const recording = this.r.recorder ? await this.r.recorder.close() : null;
    return { ...result, recording };
  }
}

function closeSocket(s: Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      s.close(() => resolve());
    } catch {
      resolve(); // already closed
    }
  });
}
