// Shapes shared by the transports and the layers above them.

export type TransportProtocol = 'udp' | 'tcp' | 'tls';

/** A remote (or local) transport address. `host` is an IP literal. */
export interface Endpoint {
  transport: TransportProtocol;
  host: string;
  port: number;
  /** TLS only: who the peer must prove to be (SNI and the certificate's
   *  name, RFC 5922 §4), and the trunk whose CA bundle and client
   *  certificate apply. Absent: the IP, the stack's defaults. */
  tls?: TlsPeer;
}

/** How a TLS connection to a peer is verified and presented. */
export interface TlsPeer {
  /** The host name of the URI we resolved (not an IP literal). */
  serverName?: string;
  /** The id of a TLS profile registered with the stack (a trunk's id). */
  profile?: string;
}

/** Called once when a message we handed to a transport could not be sent. */
export type SendErrorHandler = (err: Error) => void;

/** Receives raw message bytes from a concrete transport. */
export type RawReceiver = (buf: Buffer, source: Endpoint) => void;

/** One concrete transport (UDP socket, TCP listener and its connections). */
export interface SipTransport {
  readonly protocol: TransportProtocol;
  listen(): Promise<void>;
  close(): Promise<void>;
  /** The bound address; valid after `listen()`. */
  address(): { host: string; port: number };
  send(buf: Buffer, host: string, port: number, onError?: SendErrorHandler, peer?: TlsPeer): void;
}

/** Errors raised by the stack below the call layer carry a stable `code`. */
export class SipStackError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SipStackError';
  }
}
