import { hostname } from 'node:os';
import { systemMediaClock, type MediaClock } from './media-clock.js';
import { MediaSession } from './media-session.js';
import { PacingClock } from './pacing-clock.js';
import { RtpPortAllocator } from './rtp-port-allocator.js';
import type { AudioCodecName } from './sdp-types.js';
import { WavRecorder } from './wav-recorder.js';

/**
 * Media configuration. Every key has a default; main.ts maps them to the
 * config schema (suggested environment variables in brackets).
 */
export interface MediaConfig {
  /** Local address RTP sockets bind to [MEDIA_BIND_ADDRESS]. Default '0.0.0.0'. */
  bindAddress: string;
  /** Address written in our SDP c= line [MEDIA_ADVERTISED_ADDRESS]. Default '127.0.0.1'. */
  advertisedAddress: string;
  /** RTP port range, RTP even and RTCP +1 [MEDIA_RTP_PORT_MIN/MAX]. Default 20000–29999. */
  rtpPortMin: number;
  rtpPortMax: number;
  /** Codecs offered, preferred first [MEDIA_CODECS]. Default ['PCMU', 'PCMA']. */
  codecs: AudioCodecName[];
  /** Payload type offered for telephone-event, null not to offer it. Default 101. */
  telephoneEventPayloadType: number | null;
  /** Offer rtcp-mux (RFC 5761); a far end's offer of it is always accepted. Default false. */
  offerRtcpMux: boolean;
  /** Latch RTP/RTCP sending onto the address the far end sends from. Default true. */
  symmetricRtp: boolean;
  /** Seconds without RTP before 'inactive' (→ no_rtp_stream); 0 disables. Default 30. */
  inactivityTimeoutSec: number;
  /** Mean RTCP report interval, ms (randomised ±50 %). Default 5000. */
  rtcpIntervalMs: number;
  /** Interval of the 'stats' event, ms. Default 5000. */
  statsIntervalMs: number;
  /** Bound of the playout queue per call, ms of audio. Default 120000. */
  playoutQueueMaxMs: number;
  /** DTMF tone length and gap between digits, ms. Defaults 100 and 60. */
  dtmfDurationMs: number;
  dtmfGapMs: number;
  /** Directory for call recordings (stereo WAV); null disables recording. Default null. */
  recordingDirectory: string | null;
  /** Pacing phases per 20 ms frame, and how early a due phase may run, ms. Defaults 4 and 1. */
  pacingSlots: number;
  pacingLeadMs: number;
}

export const DEFAULT_MEDIA_CONFIG: MediaConfig = {
  bindAddress: '0.0.0.0',
  advertisedAddress: '127.0.0.1',
  rtpPortMin: 20000,
  rtpPortMax: 29999,
  codecs: ['PCMU', 'PCMA'],
  telephoneEventPayloadType: 101,
  offerRtcpMux: false,
  symmetricRtp: true,
  inactivityTimeoutSec: 30,
  rtcpIntervalMs: 5000,
  statsIntervalMs: 5000,
  playoutQueueMaxMs: 120_000,
  dtmfDurationMs: 100,
  dtmfGapMs: 60,
  recordingDirectory: null,
  pacingSlots: 4,
  pacingLeadMs: 1,
};

export interface CreateSessionOptions {
  /** Record both directions to a WAV file (needs `recordingDirectory`). */
  record?: boolean;
  /** Overrides the configured inactivity timeout for this call. */
  inactivityTimeoutSec?: number;
}

/** Owns the port range and the shared pacing clock; creates one session per call. */
export class MediaEngine {
  readonly config: MediaConfig;
  private readonly clock: MediaClock;
  private readonly ports: RtpPortAllocator;
  private readonly pacing: PacingClock;
  private readonly sessions = new Set<MediaSession>();

  constructor(config: Partial<MediaConfig> = {}, deps: { clock?: MediaClock } = {}) {
    this.config = { ...DEFAULT_MEDIA_CONFIG, ...config };
    this.clock = deps.clock ?? systemMediaClock;
    this.ports = new RtpPortAllocator(
      { min: this.config.rtpPortMin, max: this.config.rtpPortMax },
      this.config.bindAddress,
    );
    this.pacing = new PacingClock(this.clock, {
      slots: this.config.pacingSlots,
      leadMs: this.config.pacingLeadMs,
    });
  }

  get activeSessions(): number {
    return this.sessions.size;
  }

  pacingStats(): ReturnType<PacingClock['stats']> {
    return this.pacing.stats();
  }

  /** See PacingClock.spacingHistogram. */
  sendSpacingHistogram(reset = false): Uint32Array {
    return this.pacing.spacingHistogram(reset);
  }

  /** Binds a port pair and starts a session (it sends once it has remote media). */
  async createSession(options: CreateSessionOptions = {}): Promise<MediaSession> {
    const pair = await this.ports.allocate();
    const dir = this.config.recordingDirectory;
    const recorder = options.record && dir ? new WavRecorder(dir) : null;
    const session = new MediaSession(
      {
        advertisedAddress: this.config.advertisedAddress,
        codecs: this.config.codecs,
        telephoneEventPayloadType: this.config.telephoneEventPayloadType,
        offerRtcpMux: this.config.offerRtcpMux,
        symmetricRtp: this.config.symmetricRtp,
        inactivityTimeoutSec: options.inactivityTimeoutSec ?? this.config.inactivityTimeoutSec,
        rtcpIntervalMs: this.config.rtcpIntervalMs,
        statsIntervalMs: this.config.statsIntervalMs,
        playoutQueueMaxMs: this.config.playoutQueueMaxMs,
        dtmfDurationMs: this.config.dtmfDurationMs,
        dtmfGapMs: this.config.dtmfGapMs,
        cname: `gateway-${pair.port}@${hostname()}`,
      },
      {
        port: pair.port,
        rtp: pair.rtp,
        rtcp: pair.rtcp,
        pacing: this.pacing,
        clock: this.clock,
        recorder,
        release: () => {
          this.ports.release(pair.port);
          this.sessions.delete(session);
        },
      },
    );
    this.sessions.add(session);
    return session;
  }

  /** Closes every session (drain on shutdown). */
  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close('shutdown')));
  }
}
