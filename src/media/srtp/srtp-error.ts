/**
 * Errors the SRTP layer throws. Only programming errors throw (a key of the
 * wrong length, our own packet malformed); what arrives from the network is
 * never thrown, the receiver returns an `SrtpDrop` instead.
 */
export type SrtpErrorCode = 'invalid_keying_material' | 'malformed_packet';

/** An SRTP error with a stable `code`. */
export class SrtpError extends Error {
  readonly code: SrtpErrorCode;

  constructor(code: SrtpErrorCode, message: string) {
    super(message);
    this.name = 'SrtpError';
    this.code = code;
  }
}
