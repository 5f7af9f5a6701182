// Counters for the whole stack: the hot path counts instead of logging.

/** Monotonic counters, one object shared by every layer of a stack. */
export interface SipStats {
  messagesIn: number;
  messagesOut: number;
  bytesIn: number;
  bytesOut: number;
  /** Datagrams or stream frames dropped because they did not parse. */
  parseErrorsDropped: number;
  /** Requests answered 400/505 by the transport because they did not parse. */
  badRequestsAnswered: number;
  sendErrors: number;
  /** Requests and responses we sent again (timers A, E, G, and 2xx/ACK resends). */
  retransmissionsOut: number;
  /** Retransmissions received and absorbed by a transaction. */
  retransmissionsIn: number;
  /** Responses that matched no client transaction and no dialog. */
  strayResponses: number;
  transactionsCreated: number;
  transactionTimeouts: number;
  tcpConnectionsOpened: number;
  tcpConnectionsClosed: number;
  /** TCP connections destroyed because a message was not complete within
   *  the deadline from its first byte. */
  tcpClosedDeadline: number;
  /** TCP connections closed after the idle timeout without a message. */
  tcpClosedIdle: number;
  /** Accepted TCP connections destroyed at once: over the total or the
   *  per-source cap (never counted as opened). */
  tcpClosedCap: number;
  /** RFC 5626 keep-alive pings (double CRLF) answered with a CRLF. */
  tcpKeepAlivePongs: number;
  /** TLS connections whose handshake failed (bad or untrusted certificate,
   *  protocol error), ours or a peer's. */
  tlsHandshakeFailures: number;
  /** RFC 5626 §4.4.1 keep-alive pings we sent on our TLS connections, and
   *  connections closed because the pong did not come in time. */
  keepAlivePingsSent: number;
  keepAliveTimeouts: number;
  /** Exceptions thrown by a layer above while handling a message. */
  handlerErrors: number;
  /** Responses sent without a transaction (OPTIONS, strangers, over the budget; RFC 3261 §8.2.7). */
  statelessResponses: number;
  /** Requests of ours not sent because the client transaction budget was spent (local 503). */
  clientTransactionsRefused: number;
}

export function createSipStats(): SipStats {
  return {
    messagesIn: 0,
    messagesOut: 0,
    bytesIn: 0,
    bytesOut: 0,
    parseErrorsDropped: 0,
    badRequestsAnswered: 0,
    sendErrors: 0,
    retransmissionsOut: 0,
    retransmissionsIn: 0,
    strayResponses: 0,
    transactionsCreated: 0,
    transactionTimeouts: 0,
    tcpConnectionsOpened: 0,
    tcpConnectionsClosed: 0,
    tcpClosedDeadline: 0,
    tcpClosedIdle: 0,
    tcpClosedCap: 0,
    tcpKeepAlivePongs: 0,
    tlsHandshakeFailures: 0,
    keepAlivePingsSent: 0,
    keepAliveTimeouts: 0,
    handlerErrors: 0,
    statelessResponses: 0,
    clientTransactionsRefused: 0,
  };
}
