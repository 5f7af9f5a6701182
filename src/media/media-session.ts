import { randomInt } from 'node:crypto';
import type { RemoteInfo, Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import { AgentAudioEncoder } from './agent-audio-encoder.js';
import { AgentAudioWait } from './agent-audio-wait.js';
import { ALAW_DECODE, ULAW_DECODE } from './g711.js';
import type {
  MediaSessionResources,
  MediaSessionSettings,
  MediaCloseResult,
  MediaCounters,
  MediaSessionEvents,
  NetworkQuality,
  ReceivedAudioFrame,
} from './media-types.js';
import type { PacingHandle } from './pacing-clock.js';
import { PlayoutQueue, type ClearResult } from './playout-queue.js';
import { InactivityWatch } from './inactivity-watch.js';
import { RtcpChannel } from './rtcp-channel.js';
import { FRAME_SAMPLES, RtpFrameBuilder } from './rtp-frame-builder.js';
import { RTP_HEADER_SIZE } from './rtp-packet.js';
import { RtpReceiver } from './rtp-receiver.js';
import { RtpTransmitter } from './rtp-transmitter.js';
import type { SrtpKeys } from './sdes-negotiation.js';
import { SessionInbound } from './session-inbound.js';
import { SessionSdp } from './session-sdp.js';
import type { MediaDirection, NegotiatedMedia } from './sdp-types.js';
import { SrtpProtection } from './srtp-protection.js';
import { checkDtmfRequest, TelephoneEventSender } from './telephone-event-sender.js';

/**
 * One call's RTP/RTCP session on a bound port pair. Sends one packet per
 * frame on the shared pacing clock (agent audio, silence, or RFC 4733
 * events), receives and accounts the far end's packets, and hands each
 * audio frame to the handler set with `onAudio`. With SRTP agreed (SDES,
 * settings.srtp), every packet out is protected and every packet in is
 * checked and decrypted before anything else looks at it.
 */
export class MediaSession extends EventEmitter<MediaSessionEvents> {
  readonly localPort: number;
  readonly localAddress: string;
  /** RFC 3550 §8: random SSRC; sequence number and timestamp start random too (§5.1). */
  readonly ssrc = randomInt(1, 0xffffffff) >>> 0;
  private readonly settings: MediaSessionSettings;
  private readonly r: MediaSessionResources;
  private readonly sdp: SessionSdp;
  private negotiated: NegotiatedMedia | null = null;
  private readonly tx: RtpTransmitter;

  // sending
  private readonly queue: PlayoutQueue;
  private readonly dtmfOut: TelephoneEventSender;
  private readonly frames: RtpFrameBuilder;
  private readonly audioWait: AgentAudioWait;
  private readonly tsBase = randomInt(0, 0xffffffff) >>> 0;
  private startFrame = -1;
  private lastTimestamp = 0;
  private readonly encoder = new AgentAudioEncoder();
  /** The negotiated send parameters, flattened for the per-frame path (−1: none yet). */
  private sendPayloadType = -1;
  private sendEventPayloadType: number | null = null;
  private sendAlaw = false;
  private sending = false;
  private packetsSent = 0;
  private octetsSent = 0;
  private audioFramesSent = 0;
  private dtmfPacketsSent = 0;

  // receiving
  private readonly rx: RtpReceiver;
  private readonly inbound: SessionInbound;
  private readonly inactivity: InactivityWatch;

  /** Set once SDES agreed keys (RFC 4568); null: plain RTP. */
  private srtp: SrtpProtection | null = null;

  private readonly rtcp: RtcpChannel;
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
    this.sdp = new SessionSdp({
      address: settings.advertisedAddress,
      port: resources.port,
      codecs: settings.codecs,
      telephoneEventPayloadType: settings.telephoneEventPayloadType,
      ptime: resources.pacing.frameMs,
      offerRtcpMux: settings.offerRtcpMux,
      srtp: settings.srtp ?? 'rtp',
      sdesKeys: settings.sdesKeys ?? null,
    });
    this.queue = new PlayoutQueue(Math.round(settings.playoutQueueMaxMs * 8));
    const frameMs = resources.pacing.frameMs;
    this.dtmfOut = new TelephoneEventSender(
      Math.max(1, Math.round(settings.dtmfDurationMs / frameMs)),
      Math.max(1, Math.round(settings.dtmfGapMs / frameMs)),
      FRAME_SAMPLES,
    );
    this.frames = new RtpFrameBuilder(this.ssrc, randomInt(0, 0x10000), this.queue, this.dtmfOut);
    this.audioWait = new AgentAudioWait(resources.audioWaitBins ?? AgentAudioWait.histogram());
    this.rtcp = new RtcpChannel(
      settings.cname,
      resources.rtcp,
      this.tx,
      resources.clock,
      settings.rtcpIntervalMs,
      settings.symmetricRtp,
    );
    this.inactivity = new InactivityWatch(
      resources.clock.now(),
      settings.inactivityTimeoutSec * 1000,
    );
    this.rx = new RtpReceiver(
      {
        audio: () => {}, // set by onAudio: the receive path calls the handler directly
        dtmf: (digit) => this.emit('dtmf', digit),
      },
      resources.recorder,
    );
    if (settings.telephoneEventPayloadType !== null) {
      this.rx.acceptEvents(settings.telephoneEventPayloadType);
    }
    this.inbound = new SessionInbound(this, {
      rx: this.rx,
      tx: this.tx,
      rtcp: this.rtcp,
      clock: resources.clock,
      pacing: resources.pacing,
      srtpMode: (settings.srtp ?? 'rtp') !== 'rtp',
      onLatched: (n, rinfo) => this.onLatched(n, rinfo),
    });
    resources.rtp.on('message', this.inbound.onRtpDatagram);
    resources.rtcp.on('message', this.inbound.onRtcpDatagram);
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

  /** Our SDP offer (codecs and order from config, ptime 20, telephone-event, SDES a=crypto). */
  createOffer(): string {
    return this.sdp.offer();
  }

  /**
   * Applies the far end's answer to our offer. Throws MediaError (the four
   * SDP codes, and srtp_negotiation_failed in an SRTP mode).
   */
  applyAnswer(sdp: string): NegotiatedMedia {
    const n = this.sdp.readAnswer(sdp);
    this.protectWith(n.srtp);
    this.apply(n.media);
    return n.media;
  }

  /**
   * Answers an offer from the far end (a re-INVITE: hold, new address or
   * port, codec change, a new SRTP key). Returns our SDP answer; throws
   * MediaError when nothing in the offer is acceptable (the session keeps
   * its old media).
   */
  answerOffer(sdp: string): string {
    const n = this.sdp.readOffer(sdp);
    this.protectWith(n.srtp);
    this.apply(n.media);
    return this.sdp.answer(n);
  }

  /** RFC 3711 from now on (keys null: plain RTP, as agreed; SDES never downgrades). */
  private protectWith(keys: SrtpKeys | null): void {
    if (!keys) return;
    if (this.srtp) return this.srtp.rekey(keys);
    const srtp = new SrtpProtection(keys);
    this.srtp = srtp;
    this.inbound.srtp = srtp;
    this.rtcp.protect = (packet) => srtp.protectRtcp(packet);
  }

  private apply(n: NegotiatedMedia): void {
    const prev = this.negotiated;
    const moved =
      !prev || prev.remoteAddress !== n.remoteAddress || prev.remotePort !== n.remotePort;
    this.negotiated = n;
    if (moved) {
      // a new far-end address: send there, and latch again on whoever sends
      this.tx.retarget(n.remoteAddress, n.remotePort);
      this.rtcp.retarget(n);
    }
    const te = n.telephoneEventPayloadType;
    if (te !== null) this.rx.acceptEvents(te);
    this.sendPayloadType = n.payloadType;
    this.sendEventPayloadType = te;
    this.sendAlaw = n.codec === 'PCMA';
    this.sending = n.direction === 'sendrecv' || n.direction === 'sendonly';
    const now = this.r.clock.now();
    if (!prev || moved || prev.direction !== n.direction) {
      this.inactivity.reset(now); // inactivity counts from the new media
    }
    this.rtcp.start(now);
    if (this.nextStatsAt === 0) this.nextStatsAt = now + this.settings.statsIntervalMs;
  }

  /** Where RTP goes now: the SDP address, or the latched source (symmetric RTP). */
  get remoteRtp(): { address: string; port: number } | null {
    return this.negotiated ? { address: this.tx.address, port: this.tx.port } : null;
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
    this.rx.sink.audio = handler;
  }

  /**
   * Queues audio for sending: μ-law 8 kHz bytes (a Uint8Array/Buffer, kept
   * by reference), or 16-bit PCM (an Int16Array) at 8, 16 or 24 kHz.
   * Returns the milliseconds accepted (less than given when the queue is full).
   */
  enqueue(audio: Uint8Array | Int16Array, sampleRate = 8000): number {
    this.r.pacing.poll(); // a frame due now goes out before this callback's work
    const wasEmpty = this.queue.queuedBytes === 0;
    const accepted = this.queue.push(this.encoder.toUlaw(audio, sampleRate));
    if (wasEmpty && accepted > 0) this.audioWait.queuedIntoEmpty(this.r.clock.now());
    return accepted / 8;
  }

  /** Reports `name` with a 'mark' event once the audio queued so far has been sent. */
  mark(name: string): void {
    this.queue.mark(name);
  }

  /** Drops all queued audio at once; returns what was dropped, marks included. */
  clear(): ClearResult {
    this.audioWait.cancel();
    return this.queue.clear();
  }

  /** Milliseconds of agent audio waiting to be sent. */
  get queuedMs(): number {
    return this.queue.queuedBytes / 8;
  }

  /** Sends DTMF digits as RFC 4733 events (0-9 * # A-D). */
  sendDtmf(digits: string): void {
    checkDtmfRequest(this.negotiated?.telephoneEventPayloadType ?? null, digits);
    this.dtmfOut.enqueue(digits);
  }

  // ---- statistics ----

  /** The call record's networkQuality, spec shape. */
  stats(): NetworkQuality {
    const rx = this.rx.stats.counters();
    const q: NetworkQuality = {
      packetsReceived: rx.packetsReceived,
      packetsLost: rx.packetsLost,
      lossPct: Math.round(rx.lossPct * 100) / 100,
      packetsOutOfOrder: rx.packetsOutOfOrder,
      jitterMs: Math.round(rx.jitterMs * 100) / 100,
    };
    const far = this.rtcp.state.farEnd;
    if (far) q.farEnd = far;
    if (this.srtp) q.srtp = this.srtp.quality();
    return q;
  }

  counters(): MediaCounters {
    const rx = this.rx.stats.counters();
    return {
      packetsSent: this.packetsSent,
      octetsSent: this.octetsSent,
      audioFramesSent: this.audioFramesSent,
      dtmfPacketsSent: this.dtmfPacketsSent,
      packetsReceived: rx.packetsReceived,
      packetsDuplicated: rx.packetsDuplicated,
      malformedPackets:
        this.inbound.malformed + this.rtcp.state.malformed + (this.srtp?.malformed ?? 0),
      foreignPackets: this.tx.foreignPackets,
      unknownPayloadType: this.rx.unknownPayloadType,
      rtcpSent: this.rtcp.sent,
      rtcpReceived: this.rtcp.state.reportsReceived,
      queuedMs: this.queue.queuedBytes / 8,
      overflowMs: this.queue.overflowBytes / 8,
      rttMs: this.rtcp.state.rttMs,
      sendErrors: this.tx.sendErrors,
      packetsBeforeKeys: this.inbound.packetsBeforeKeys,
    };
  }

  // ---- sending: one call per frame from the pacing clock ----

  onPacingTick(frame: number): void {
    if (this.startFrame < 0) this.startFrame = frame;
    const ts = (this.tsBase + (frame - this.startFrame) * FRAME_SAMPLES) >>> 0;
    this.lastTimestamp = ts;
    if ((frame & 15) === 0) this.housekeeping();
    if (this.sendPayloadType < 0) return; // no remote media yet
    if (!this.sending) {
      this.frames.skip(ts); // on hold: time passes, nothing is sent
      this.audioWait.cancel();
    } else {
      const alaw = this.sendAlaw;
      const f = this.frames.build(ts, this.sendPayloadType, alaw, this.sendEventPayloadType);
      const packet = f.packet;
      this.tx.send(this.srtp ? this.srtp.protectRtp(packet) : packet);
      this.packetsSent++;
      this.octetsSent += packet.length - RTP_HEADER_SIZE;
      if (f.isEvent) this.dtmfPacketsSent++;
      else {
        if (f.audioBytes > 0) {
          this.audioFramesSent++;
          if (this.audioWait.pending) this.audioWait.sent(this.r.clock.now());
        }
        if (this.r.recorder) this.recordNear(packet, alaw);
      }
    }
    if (this.queue.pendingMarks > 0) {
      const due = this.queue.takeDueMarks();
      if (due) for (const name of due) this.emit('mark', name);
    }
  }

  private recordNear(packet: Buffer, alaw: boolean): void {
    this.r.recorder!.near(packet.subarray(RTP_HEADER_SIZE), alaw ? ALAW_DECODE : ULAW_DECODE);
  }

  private housekeeping(): void {
    if (!this.negotiated) return;
    const now = this.r.clock.now();
    if (this.rtcp.due(now)) this.sendRtcp();
    if (now >= this.nextStatsAt) {
      this.nextStatsAt = now + this.settings.statsIntervalMs;
      this.emit('stats', this.stats());
    }
    const expectRtp = this.direction === 'sendrecv' || this.direction === 'recvonly';
    const silentFor = this.inactivity.check(now, this.rx.lastPacketAt, expectRtp);
    if (silentFor !== null) this.emit('inactive', { silentForMs: silentFor });
  }

  private sendRtcp(bye?: string): void {
    if (!this.negotiated) return;
    const sender =
      this.packetsSent > 0
        ? {
            ssrc: this.ssrc,
            rtpTimestamp: this.lastTimestamp,
            packetCount: this.packetsSent >>> 0,
            octetCount: this.octetsSent >>> 0,
          }
        : null;
    const rx = this.rx.remoteSsrc >= 0 ? { stats: this.rx.stats, ssrc: this.rx.remoteSsrc } : null;
    this.rtcp.send(sender, this.ssrc, rx, bye);
  }

  // ---- receiving: see SessionInbound ----

  private onLatched(n: Readonly<NegotiatedMedia>, rinfo: RemoteInfo): void {
    this.rtcp.latched(n, rinfo);
    this.emit('latched', { address: rinfo.address, port: rinfo.port });
  }

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
    this.rx.sink.audio = () => {};
    this.r.rtp.off('message', this.inbound.onRtpDatagram);
    this.r.rtcp.off('message', this.inbound.onRtcpDatagram);
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
