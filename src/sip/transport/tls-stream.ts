// What makes the stream transport TLS (RFC 3261 §26.2.1): the listener with
// our certificate, connections that verify the peer, and the key a verified
// connection is reused under.
import { isIP, type Socket } from 'node:net';
import * as tls from 'node:tls';
import type { TlsPeer } from './types.js';

/** What makes the stream TLS. */
export interface StreamTlsOptions {
  /** The certificate (chain) and key our listener presents, PEM; without
   *  them we only open connections. `ca` + `requestClientCert`: peers must
   *  present a certificate from that CA (mutual TLS). */
  server?: { cert: string; key: string; ca?: string; requestClientCert?: boolean };
  /** The context for connections to a peer of a profile (a trunk's CA
   *  bundle and client certificate); undefined: the system's CAs, no client
   *  certificate. */
  contextFor(profile: string | undefined): tls.SecureContext | undefined;
  /** RFC 5626 §4.4.1 on connections we opened: a double CRLF after this
   *  long without traffic, the connection dropped when no CRLF answers
   *  within the timeout. 0 = no keep-alive. */
  keepAliveIntervalMs: number;
  keepAliveTimeoutMs: number;
}

/** Our listener: a handshake is bounded like a message; `onHandshakeFailure` counts refusals. */
export function createTlsListener(
  server: NonNullable<StreamTlsOptions['server']>,
  handshakeTimeoutMs: number,
  onSocket: (socket: Socket) => void,
  onHandshakeFailure: () => void,
): tls.Server {
  const { cert, key, ca, requestClientCert } = server;
  const listener = tls.createServer(
    {
      cert,
      key,
      ca,
      requestCert: requestClientCert === true,
      rejectUnauthorized: requestClientCert === true,
      handshakeTimeout: handshakeTimeoutMs,
    },
    onSocket,
  );
  listener.on('tlsClientError', onHandshakeFailure);
  return listener;
}

/** RFC 3261 §26.2.1, RFC 5922 §7.2: the peer's certificate must chain to a
 *  trusted CA and name the host we resolved (SNI = that name); the IP when
 *  we only know the IP. A reconnect is verified as the first connection was. */
export function connectTls(
  secure: StreamTlsOptions,
  host: string,
  port: number,
  known: TlsPeer | undefined,
): Socket {
  const name = known?.serverName;
  const servername = name && isIP(name) === 0 ? name : undefined;
  return tls.connect({
    host,
    port,
    servername,
    secureContext: secure.contextFor(known?.profile),
    rejectUnauthorized: true,
    checkServerIdentity: (_, cert) => tls.checkServerIdentity(servername ?? host, cert),
  });
}

/** A TLS connection's key: its address and who the peer was verified as. */
export function tlsKey(address: string, peer: TlsPeer | undefined): string {
  return `${address}|${peer?.profile ?? ''}|${peer?.serverName ?? ''}`;
}
