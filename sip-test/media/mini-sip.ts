import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { EventEmitter } from 'node:events';

/**
 * Just enough SIP over UDP to put a media session in a call with SIPp,
 * independent of the real SIP stack: a UAS that answers one INVITE with a
 * 200 OK carrying our SDP and answers BYE, and a UAC that sends INVITE,
 * ACKs the 200 and later sends BYE. Test fixture only.
 */
export interface SipMessage {
  startLine: string;
  headers: Map<string, string[]>;
  body: string;
  source: RemoteInfo;
}

export function parseSip(data: Buffer, source: RemoteInfo): SipMessage {
  const text = data.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 4);
  const [startLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
  }
  return { startLine, headers, body, source };
}

const h = (m: SipMessage, name: string): string => m.headers.get(name)?.[0] ?? '';

function serialize(startLine: string, headers: [string, string][], body = ''): Buffer {
  const lines = [startLine, ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body) lines.push('Content-Type: application/sdp');
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`, '', body);
  return Buffer.from(lines.join('\r\n'));
}

async function bindSip(): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

/** Answers INVITE with 200 + `answer(offerSdp)`, and BYE with 200; emits 'ack' and 'bye'. */
export class MiniSipUas extends EventEmitter<{ invite: [string]; ack: []; bye: [] }> {
  private constructor(
    private readonly socket: Socket,
    private readonly answer: (offer: string) => string,
  ) {
    super();
    socket.on('message', (data, rinfo) => this.onMessage(parseSip(data, rinfo)));
  }

  static async start(answer: (offer: string) => string): Promise<MiniSipUas> {
    return new MiniSipUas(await bindSip(), answer);
  }

  get port(): number {
    return this.socket.address().port;
  }

  private onMessage(m: SipMessage): void {
    const method = m.startLine.split(' ')[0];
    if (method === 'INVITE') {
      this.emit('invite', m.body);
      this.respond(m, '200 OK', this.answer(m.body));
    } else if (method === 'BYE') {
      this.respond(m, '200 OK');
      this.emit('bye');
    } else if (method === 'ACK') {
      this.emit('ack');
    }
  }

  private respond(req: SipMessage, status: string, body = ''): void {
    const to = h(req, 'to');
    const headers: [string, string][] = [
      ...(req.headers.get('via') ?? []).map((v): [string, string] => ['Via', v]),
      ['From', h(req, 'from')],
      ['To', to.includes('tag=') ? to : `${to};tag=media-test`],
      ['Call-ID', h(req, 'call-id')],
      ['CSeq', h(req, 'cseq')],
      ['Contact', `<sip:media@127.0.0.1:${this.port}>`],
    ];
    this.socket.send(
      serialize(`SIP/2.0 ${status}`, headers, body),
      req.source.port,
      req.source.address,
    );
  }

  close(): void {
    this.socket.close();
  }
}

/** Calls a UAS at 127.0.0.1:`port`: INVITE with `offer`, ACK on 200, `bye()` later. */
export class MiniSipUac {
  private toHeader = '';
  private readonly callId = `media-${Math.random().toString(36).slice(2)}@127.0.0.1`;
  private readonly fromTag = Math.random().toString(36).slice(2);
  private waiters: { status: number; resolve: (m: SipMessage) => void }[] = [];

  private constructor(
    private readonly socket: Socket,
    private readonly remotePort: number,
  ) {
    socket.on('message', (data, rinfo) => {
      const m = parseSip(data, rinfo);
      const status = Number(m.startLine.split(' ')[1]);
      const w = this.waiters.find((x) => x.status === status);
      if (w) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(m);
      }
    });
  }

  static async start(remotePort: number): Promise<MiniSipUac> {
    return new MiniSipUac(await bindSip(), remotePort);
  }

  private wait(status: number, ms: number): Promise<SipMessage> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${status} within ${ms} ms`)), ms);
      this.waiters.push({
        status,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      });
    });
  }

  private request(method: string, cseq: number, body = ''): void {
    const port = this.socket.address().port;
    const uri = `sip:service@127.0.0.1:${this.remotePort}`;
    const headers: [string, string][] = [
      ['Via', `SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK${Math.random().toString(36).slice(2)}`],
      ['From', `<sip:gateway@127.0.0.1:${port}>;tag=${this.fromTag}`],
      ['To', this.toHeader || `<${uri}>`],
      ['Call-ID', this.callId],
      ['CSeq', `${cseq} ${method}`],
      ['Contact', `<sip:gateway@127.0.0.1:${port}>`],
      ['Max-Forwards', '70'],
    ];
    this.socket.send(
      serialize(`${method} ${uri} SIP/2.0`, headers, body),
      this.remotePort,
      '127.0.0.1',
    );
  }

  /** Sends INVITE, waits for 200, sends ACK; returns the answer SDP. */
  async invite(offer: string, timeoutMs = 5000): Promise<string> {
    const ok = this.wait(200, timeoutMs);
    this.request('INVITE', 1, offer);
    const res = await ok;
    this.toHeader = h(res, 'to');
    this.request('ACK', 1);
    return res.body;
  }

  async bye(timeoutMs = 5000): Promise<void> {
    const ok = this.wait(200, timeoutMs);
    this.request('BYE', 2);
    await ok;
  }

  close(): void {
    this.socket.close();
  }
}
