// Transport errors as the call record shows them: short, stable, with
// OpenSSL's and Node's code, and nothing of the message itself.

/** OpenSSL verification codes Node reports on a refused certificate. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function codeOf(err: Error): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether an error on a TLS socket came from the handshake (certificate,
 *  protocol) rather than the TCP connection under it. */
export function isTlsFailure(err: Error): boolean {
  const code = codeOf(err);
  if (code === undefined) return false;
  return CERTIFICATE_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS');
}

/** One line for the record's `sipFailure.transportError`: e.g.
 *  "tls: certificate not trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY)",
 *  "tcp: connection refused (ECONNREFUSED)". */
export function describeTransportError(err: Error, transport: string): string {
  const code = codeOf(err) ?? 'unknown';
  if (isTlsFailure(err)) {
    const what =
      code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH'
        ? 'certificate does not name the trunk host'
        : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
          ? 'certificate outside its validity'
          : CERTIFICATE_CODES.has(code)
            ? 'certificate not trusted'
            : 'handshake failed';
    return `tls: ${what} (${code})`;
  }
  const what =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ECONNRESET'
        ? 'connection reset'
        : code === 'ETIMEDOUT'
          ? 'connection timed out'
          : code === 'EHOSTUNREACH' || code === 'ENETUNREACH'
            ? 'host unreachable'
            : 'send failed';
  return `${transport}: ${what} (${code})`;
}
