import { hostname } from 'node:os';
import { AgentAudioWait } from './agent-audio-wait.js';
import { systemMediaClock, type MediaClock } from './media-clock.js';
import { MediaSession } from './media-session.js';
import { PacingClock } from './pacing-clock.js';
import { RtpPortAllocator } from './rtp-port-allocator.js';
import { DEFAULT_MEDIA_CONFIG, type MediaConfig } from './media-config.js';
import { WavRecorder } from './wav-recorder.js';

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

  /** Binds a port pair and starts a session (it sends once it has remote media). */
  async createSession(options: CreateSessionOptions = {}): Promise<MediaSession> {
    const pair = await this.ports.allocate();
    const dir = this.config.recordingDirectory;
    const recorder = options.record && dir ? new WavRecorder(dir) : null;
    const session = new MediaSession(
      {
        ...this.config,
        inactivityTimeoutSec: options.inactivityTimeoutSec ?? this.config.inactivityTimeoutSec,
        cname: `gateway-${pair.port}@${hostname()}`,
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
