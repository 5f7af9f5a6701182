// What the calls domain needs from the RTP layer (src/media fits it).

export type { NetworkQuality } from '../../model/call-record.js';
import type { NetworkQuality } from '../../model/call-record.js';

/**
 * How a leg's media is protected: 'rtp' (the default) plain RTP/AVP; 'srtp'
 * RTP/SAVP with SDES a=crypto (RFC 4568), SRTP required; 'srtp-optional'
 * RTP/AVP with a=crypto, SRTP if the answer has a=crypto, else plain RTP.
 */
export type SrtpMode = 'rtp' | 'srtp' | 'srtp-optional';

export interface NegotiatedMedia {
  codec: string;
  remoteAddress: string;
  remotePort: number;
}

export interface ReceivedFrame {
  ulaw: Buffer;
  mediaTimeMs: number;
  receivedAt: number;
}

export interface MediaLegEvents {
  dtmf: { digit: string };
  mark: string;
  stats: NetworkQuality;
  inactive: { silentForMs: number };
}

export interface MediaLeg {
  readonly localPort: number;
  readonly localAddress: string;
  createOffer(): string;
  /** Throws an error whose `code` is no_selected_codec, no_remote_rtp_address, no_remote_rtp_port or sdp_error (or, on an SRTP leg, srtp_negotiation_failed). */
  applyAnswer(sdp: string): NegotiatedMedia;
  answerOffer(sdp: string): string;
  onAudio(handler: (frame: ReceivedFrame) => void): void;
  enqueue(audio: Uint8Array | Int16Array, sampleRate?: number): number;
  mark(name: string): void;
  clear(): { droppedMs: number; droppedMarks: string[] };
  sendDtmf(digits: string): void;
  stats(): NetworkQuality;
  on(event: 'dtmf', listener: (e: MediaLegEvents['dtmf']) => void): unknown;
  on(event: 'mark', listener: (name: string) => void): unknown;
  on(event: 'stats', listener: (q: NetworkQuality) => void): unknown;
  on(event: 'inactive', listener: (e: MediaLegEvents['inactive']) => void): unknown;
  close(
    reason?: string,
  ): Promise<{ networkQuality: NetworkQuality; recording: { fileId: string } | null }>;
}

export interface MediaPort {
  createSession(options?: {
    record?: boolean;
    inactivityTimeoutSec?: number;
    srtp?: SrtpMode;
  }): Promise<MediaLeg>;
}
