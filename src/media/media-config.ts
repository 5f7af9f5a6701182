import type { AudioCodecName } from './sdp-types.js';

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
