// Shapes shared by the transports and the layers above them.

export type TransportProtocol = 'udp' | 'tcp';

/** A remote (or local) transport address. `host` is an IP literal. */
export interface Endpoint {
  transport: TransportProtocol;
  host: string;
  port: number;
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
  send(buf: Buffer, host: string, port: number, onError?: SendErrorHandler): void;
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
