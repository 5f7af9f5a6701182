/**
 * Errors raised by the media layer. Each carries a stable `code` that the
 * calls domain maps to an end reason (the four SDP codes are end reasons of
 * the spec as they stand). `srtp_negotiation_failed`: an answer or a far-end
 * offer without the SDES crypto the session requires (RFC 4568); the session
 * keeps its previous media, as with the SDP codes.
 */
export type MediaErrorCode =
  | 'no_selected_codec'
  | 'no_remote_rtp_address'
  | 'no_remote_rtp_port'
  | 'sdp_error'
  | 'srtp_negotiation_failed'
  | 'no_rtp_port_available'
  | 'dtmf_not_negotiated'
  | 'invalid_dtmf_digit'
  | 'session_closed'
  | 'unsupported_audio_format';

export class MediaError extends Error {
  readonly code: MediaErrorCode;

  constructor(code: MediaErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MediaError';
    this.code = code;
  }
}
