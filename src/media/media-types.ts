import type { Socket } from 'node:dgram';
import type { MediaClock } from './media-clock.js';
import type { MediaConfig } from './media-config.js';
import type { PacingClock } from './pacing-clock.js';
import type { FarEndQuality } from './rtcp-session-state.js';
import type { SdesOfferKeys } from './sdes-offer-keys.js';
import type { AudioCodecName, SrtpMode } from './sdp-types.js';
import type { SrtpSuiteName } from './srtp/index.js';
import type { RecordingResult, WavRecorder } from './wav-recorder.js';

/** The call record's `networkQuality`, in exactly the spec's shape. */
export interface NetworkQuality {
  packetsReceived: number;
  packetsLost: number;
  /** 0 to 100. */
  lossPct: number;
  packetsOutOfOrder: number;
  jitterMs: number;
  farEnd?: FarEndQuality;
  /** Present on SRTP legs only. */
  srtp?: SrtpQuality;
}

/** An SRTP leg's figures (RFC 3711): the suite agreed and what was dropped. */
export interface SrtpQuality {
  suite: SrtpSuiteName;
  /** SRTP and SRTCP packets whose authentication tag did not verify (§3.3, §3.4). */
  authFailures: number;
  /** SRTP and SRTCP packets refused by the replay check (§3.3.2): seen already or too old. */
  replayed: number;
  /** SRTP and SRTCP packets that authenticated and were decrypted. */
  packetsUnprotected: number;
}

/**
 * One received audio packet (normally 20 ms), handed to the audio handler.
 * The object is reused for the session's next packet: copy what you keep.
 */
export interface ReceivedAudioFrame {
  /** The payload as received, in `codec`. Valid only during the call; copy to keep. */
  payload: Buffer;
  /** The same audio in μ-law: `payload` itself when the codec is PCMU. */
  ulaw: Buffer;
  codec: AudioCodecName;
  /** Extended (32-bit, wrap-free) sequence number. */
  sequenceNumber: number;
  /** RTP timestamp as received. */
  timestamp: number;
  /** Media time of this frame in ms since the first received packet (from RTP timestamps). */
  mediaTimeMs: number;
  marker: boolean;
  /** Local clock (MediaClock.now) at arrival. */
  receivedAt: number;
}

export interface ReceivedDtmf {
  digit: string;
  event: number;
  /** RTP timestamp of the event's start. */
  timestamp: number;
}

/** Detail counters beyond the spec's `networkQuality`, for metrics and logs. */
export interface MediaCounters {
  packetsSent: number;
  octetsSent: number;
  /** Frames sent with agent audio (rest were silence or DTMF). */
  audioFramesSent: number;
  dtmfPacketsSent: number;
  packetsReceived: number;
  packetsDuplicated: number;
  /** Datagrams that were not RTP/RTCP, or from a source we did not latch to. */
  malformedPackets: number;
  foreignPackets: number;
  unknownPayloadType: number;
  rtcpSent: number;
  rtcpReceived: number;
  /** Queued agent audio, ms, and audio refused because the queue was full. */
  queuedMs: number;
  overflowMs: number;
  rttMs: number;
  sendErrors: number;
  /** SRTP modes: RTP that came before the answer gave the far end's key (dropped). */
  packetsBeforeKeys: number;
}

export interface MediaCloseResult {
  networkQuality: NetworkQuality;
  counters: MediaCounters;
  recording: RecordingResult | null;
}

export interface MediaSessionEvents {
  /** A DTMF digit received (RFC 4733), once per event. */
  dtmf: [ReceivedDtmf];
  /** A mark set with `mark(name)`: the audio queued before it has been sent. */
  mark: [string];
  /** Periodic statistics (every `statsIntervalMs`). */
  stats: [NetworkQuality];
  /** No RTP for `inactivityTimeoutSec` while the far end should send (→ `no_rtp_stream`). */
  inactive: [{ silentForMs: number }];
  /** Symmetric RTP latched on the source that actually sends. */
  latched: [{ address: string; port: number }];
  /** A socket error; the session keeps running. */
  error: [Error];
}

/** Per-session settings: the engine's config (per-call overrides applied) and a CNAME. */
export type MediaSessionSettings = Pick<
  MediaConfig,
  | 'advertisedAddress'
  | 'codecs'
  | 'telephoneEventPayloadType'
  | 'offerRtcpMux'
  | 'symmetricRtp'
  | 'inactivityTimeoutSec'
  | 'rtcpIntervalMs'
  | 'statsIntervalMs'
  | 'playoutQueueMaxMs'
  | 'dtmfDurationMs'
  | 'dtmfGapMs'
> & {
  cname: string;
  /** How media is protected; default 'rtp'. */
  srtp?: SrtpMode;
  /** Our SDES keys (generateSdesOfferKeys), required with an SRTP mode. */
  sdesKeys?: SdesOfferKeys | null;
};

export interface MediaSessionResources {
  port: number;
  rtp: Socket;
  rtcp: Socket;
  pacing: PacingClock;
  clock: MediaClock;
  recorder: WavRecorder | null;
  /** The engine's agent-audio wait histogram (agent-audio-wait.ts); absent: not measured. */
  audioWaitBins?: Uint32Array;
  release: () => void;
}
