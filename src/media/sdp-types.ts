/** Audio codecs the media layer speaks (G.711, RFC 3551 static payload types). */
export type AudioCodecName = 'PCMU' | 'PCMA';

export const STATIC_PAYLOAD_TYPES: Record<AudioCodecName, number> = { PCMU: 0, PCMA: 8 };

/**
 * How a session protects its media (RFC 3711 SRTP keyed by RFC 4568 SDES):
 * 'rtp' plain RTP/AVP as ever; 'srtp' RTP/SAVP with a=crypto, nothing less;
 * 'srtp-optional' RTP/AVP with a=crypto ("best effort SRTP"): SRTP when the
 * far end answers with a=crypto, plain RTP when it answers without.
 */
export type SrtpMode = 'rtp' | 'srtp' | 'srtp-optional';

/** The m-line's transport protocol (RFC 3551 RTP/AVP, RFC 3711 §12 RTP/SAVP). */
export type MediaProfile = 'RTP/AVP' | 'RTP/SAVP';

/** RFC 3264 §5.1 direction, always from the point of view of the side it describes. */
export type MediaDirection = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

/** What we put in our SDP. */
export interface LocalMediaDescription {
  /** Address the far end should send to (the advertised address). */
  address: string;
  port: number;
  /** Preferred first; default ['PCMU', 'PCMA']. */
  codecs: readonly AudioCodecName[];
  /** Dynamic payload type for telephone-event, or null not to offer it. */
  telephoneEventPayloadType: number | null;
  ptime: number;
  rtcpMux: boolean;
  direction: MediaDirection;
  sessionId: string;
  sessionVersion: number;
  /** The m-line's protocol; default RTP/AVP (an answer mirrors the offer's). */
  profile?: MediaProfile;
  /** RFC 4568 §9.1 `a=crypto` values (what follows `a=crypto:`); default none. */
  crypto?: readonly string[];
}

/** The outcome of an offer/answer exchange, as the session applies it. */
export interface NegotiatedMedia {
  codec: AudioCodecName;
  /** RTP clock rate of the codec, Hz (8000 for G.711: the call record's `hertz`). */
  clockRate: number;
  /** Payload type we send audio with (the remote's number for the codec). */
  payloadType: number;
  /** Remote's payload type for telephone-event, null when not agreed. */
  telephoneEventPayloadType: number | null;
  remoteAddress: string;
  remotePort: number;
  remoteRtcpAddress: string;
  remoteRtcpPort: number;
  rtcpMux: boolean;
  /** Our direction: `recvonly` when the far end holds with sendonly, etc. */
  direction: MediaDirection;
  /** Remote's a=ptime, when given. */
  ptime: number | null;
  /** Every codec both sides support, preferred first (the chosen one first). */
  commonCodecs: AudioCodecName[];
  /** The remote m-line's protocol (RTP/AVPF counts as RTP/AVP, RTP/SAVPF as RTP/SAVP). */
  profile: MediaProfile;
}
