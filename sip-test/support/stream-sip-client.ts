// A bare SIP client over TLS or TCP for tests that drive a peer by hand:
// sends text as given, frames what comes back by Content-Length (RFC 3261
// §18.3) and counts RFC 5626 §3.5.1 CRLF pongs. No transactions, no
// retransmissions (a stream transport needs none); digestAuthorization()
// computes the answer to a Digest challenge. Test fixture only.
import { createHash, randomBytes } from 'node:crypto';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface StreamSipMessage {
  startLine: string;
  /** Response status code; undefined for a request. */
  status: number | undefined;
  /** Request method; for a response, the CSeq method. */
  method: string;
  /** Lower-case names; a header repeated (or comma-joined Record-Route lines) keeps every line. */
  headers: Map<string, string[]>;
  body: string;
  raw: string;
}

export interface TlsClientOptions {
  port: number;
  /** PEM of the CA(s) to trust; the server's certificate is verified against them. */
  ca: string;
  /** Client certificate and key (PEM) for mutual TLS. */
  cert?: string;
  key?: string;
  /** SNI and the name checked in the certificate. Default 'localhost'. */
  servername?: string;
}

export class StreamSipClient {
  readonly messages: StreamSipMessage[] = [];
  /** Bare CRLFs received outside a message (keep-alive pongs). */
  pongs = 0;
  /** Set when the connection closed (with its error, if any). */
  closed: { error: Error | undefined } | undefined;
  private buf = Buffer.alloc(0);
  private lastError: Error | undefined;

  private constructor(readonly socket: Socket | TLSSocket) {
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (e) => (this.lastError = e));
    socket.on('close', () => (this.closed = { error: this.lastError }));
  }

  static tls(o: TlsClientOptions): Promise<StreamSipClient> {
    return new Promise((resolve, reject) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port: o.port,
        ca: o.ca,
        cert: o.cert,
        key: o.key,
        servername: o.servername ?? 'localhost',
      });
      socket.once('secureConnect', () => resolve(new StreamSipClient(socket)));
      socket.once('error', reject);
    });
  }

  static tcp(port: number): Promise<StreamSipClient> {
    return new Promise((resolve, reject) => {
      const socket = netConnect(port, '127.0.0.1');
      socket.once('connect', () => resolve(new StreamSipClient(socket)));
      socket.once('error', reject);
    });
  }

  get localPort(): number {
    return this.socket.localPort ?? 0;
  }

  /** Sends `text` with bare LFs turned into CRLFs. */
  send(text: string): void {
    this.socket.write(text.replace(/\r?\n/g, '\r\n'));
  }

  /** Resolves with the first message (past or future) that matches. */
  async waitFor(
    match: (m: StreamSipMessage) => boolean,
    timeoutMs = 5000,
  ): Promise<StreamSipMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.closed) throw new Error(`connection closed: ${this.closed.error?.message ?? 'EOF'}`);
      if (Date.now() > deadline) throw new Error(`no matching SIP message within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Resolves once the connection has closed (with its error, if any); rejects after timeoutMs. */
  async waitClosed(timeoutMs = 5000): Promise<Error | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error(`connection still open after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.closed.error;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      // RFC 5626 §3.5.1: a lone CRLF between messages is a pong
      while (this.buf.subarray(0, 2).toString('latin1') === '\r\n') {
        this.pongs++;
        this.buf = this.buf.subarray(2);
      }
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.toString('utf8', 0, end);
      const len = Number(/^(?:content-length|l)\s*:\s*(\d+)/im.exec(head)?.[1] ?? 0);
      if (this.buf.length < end + 4 + len) return;
      const body = this.buf.toString('utf8', end + 4, end + 4 + len);
      this.buf = this.buf.subarray(end + 4 + len);
      this.messages.push(parseStreamSip(head, body));
    }
  }
}

export function parseStreamSip(head: string, body: string): StreamSipMessage {
  const [startLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
  }
  const status = /^SIP\/2\.0 (\d{3})/.exec(startLine)?.[1];
  const method =
    status === undefined
      ? startLine.split(' ')[0]!
      : (headers.get('cseq')?.[0]?.split(/\s+/)[1] ?? '');
  return {
    startLine,
    status: status === undefined ? undefined : Number(status),
    method,
    headers,
    body,
    raw: `${head}\r\n\r\n${body}`,
  };
}

/** A fresh RFC 3261 branch, tag or Call-ID part. */
export const token = (prefix = ''): string => prefix + randomBytes(6).toString('hex');

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

/**
 * An Authorization (or Proxy-Authorization) value answering a Digest
 * challenge with qop=auth, MD5 (RFC 2617 §3.2.2), nonce count 1.
 */
export function digestAuthorization(
  challenge: string,
  method: string,
  uri: string,
  username: string,
  password: string,
): string {
  const param = (n: string) => new RegExp(`${n}="?([^",]+)"?`).exec(challenge)?.[1] ?? '';
  const realm = param('realm');
  const nonce = param('nonce');
  const cnonce = token();
  const ha1 = md5(`${username}:${realm}:${password}`);
  const ha2 = md5(`${method}:${uri}`);
  const response = md5(`${ha1}:${nonce}:00000001:${cnonce}:auth:${ha2}`);
  return `Digest username="${username}", realm="${realm}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="${cnonce}"`;
}
