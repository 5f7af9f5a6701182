/**
 * Errors raised by the media layer. Each carries a stable `code` that the
 * calls domain maps to an end reason (the four SDP codes are end reasons of
 * the spec as they stand).
 */
export type MediaErrorCode =
  | 'no_selected_codec'
  | 'no_remote_rtp_address'
  | 'no_remote_rtp_port'
  | 'sdp_error'
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
