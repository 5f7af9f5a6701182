import { hostname } from 'node:os';
import { AgentAudioWait } from './agent-audio-wait.js';
import { systemMediaClock, type MediaClock } from './media-clock.js';
import { MediaSession } from './media-session.js';
import { PacingClock } from './pacing-clock.js';
import { RtpPortAllocator } from './rtp-port-allocator.js';
import { DEFAULT_MEDIA_CONFIG, type MediaConfig } from './media-config.js';
import { generateSdesOfferKeys, type SdesOfferKeys } from './sdes-offer-keys.js';
import type { SrtpMode } from './sdp-types.js';
import { WavRecorder } from './wav-recorder.js';

export interface CreateSessionOptions {
  /** Record both directions to a WAV file (needs `recordingDirectory`). */
  record?: boolean;
  /** Overrides the configured inactivity timeout for this call. */
  inactivityTimeoutSec?: number;
  /**
   * How media is protected (SDP Security Descriptions, RFC 4568, for SRTP,
   * RFC 3711). Default 'rtp': plain RTP/AVP, no a=crypto. 'srtp': offers
   * RTP/SAVP with a=crypto and requires SRTP in the answer; 'srtp-optional':
   * offers RTP/AVP with a=crypto, SRTP if the answer has a=crypto, plain RTP
   * if not. An answer that does not fit throws MediaError srtp_negotiation_failed.
   */
  srtp?: SrtpMode;
}

/** Owns the port range and the shared pacing clock; creates one session per call. */
export class MediaEngine {
  readonly config: MediaConfig;
  private readonly clock: MediaClock;
  private readonly ports: RtpPortAllocator;
  private readonly pacing: PacingClock;
  private readonly audioWaitBins = AgentAudioWait.histogram();
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

  /** See AgentAudioWait: agent audio that found its queue empty, until its frame left. */
  agentAudioWaitHistogram(): Uint32Array {
    return this.audioWaitBins.slice();
  }

  /** See PacingClock.spacingHistogram. */
  sendSpacingHistogram(reset = false): Uint32Array {
    return this.pacing.spacingHistogram(reset);
  }

  /**
   * Binds a port pair and starts a session (it sends once it has remote
   * media). `sdesKeys`: the keys to offer with an SRTP mode, when made
   * elsewhere (the media worker takes the main thread's); default fresh ones.
   */
  async createSession(
    options: CreateSessionOptions = {},
    sdesKeys?: SdesOfferKeys,
  ): Promise<MediaSession> {
    const srtp = options.srtp ?? 'rtp';
    const pair = await this.ports.allocate();
    const dir = this.config.recordingDirectory;
    const recorder = options.record && dir ? new WavRecorder(dir) : null;
    const session = new MediaSession(
      {
        ...this.config,
        inactivityTimeoutSec: options.inactivityTimeoutSec ?? this.config.inactivityTimeoutSec,
        cname: `gateway-${pair.port}@${hostname()}`,
        srtp,
        sdesKeys: srtp === 'rtp' ? null : (sdesKeys ?? generateSdesOfferKeys()),
      },
      {
        port: pair.port,
        rtp: pair.rtp,
        rtcp: pair.rtcp,
        pacing: this.pacing,
        clock: this.clock,
        recorder,
        audioWaitBins: this.audioWaitBins,
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
