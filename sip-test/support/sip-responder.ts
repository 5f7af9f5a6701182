// A small SIP UAS over UDP on loopback, for daemon tests that must know what
// the far end saw: every request it received (method, Request-URI user,
// Call-ID, CSeq), so a test can count the INVITEs sent to one number or
// prove that no CANCEL left. What it answers is chosen per INVITE:
//
//   silent       nothing at all (not even to a CANCEL): a far end that is gone
//   trying-only  100 Trying, then nothing; a CANCEL gets 200 + 487
//   ring         100, 180, then nothing; a CANCEL gets 200 + 487
//   reject       100, then a final response (e.g. 486 Busy Here)
//   answer       100, 180, 200 with SDP (RTP echoed), then holds until our BYE
//
// It never sends a BYE of its own. Retransmitted INVITEs get the last response
// again; a 200 is retransmitted until its ACK (RFC 3261 §13.3.1.4).
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

export type InviteBehaviour =
  | { kind: 'silent' }
  | { kind: 'trying-only' }
  | { kind: 'ring' }
  | { kind: 'reject'; code: number; reason: string; headers?: string[] }
  | { kind: 'answer' };

export interface ReceivedRequest {
  method: string;
  /** The user part of the INVITE's Request-URI (the dialed number as the trunk formats it); for ACK, CANCEL and BYE that of their INVITE. */
  user: string;
  callId: string;
  cseq: number;
  /** Date.now() when it arrived. */
  at: number;
  /** Same Call-ID, CSeq and method as an earlier request. */
  retransmission: boolean;
}

/** Decides what to answer to a new INVITE; `index` counts INVITEs (0-based) across all users. */
export type InvitePlan = (invite: {
  user: string;
  index: number;
  callId: string;
}) => InviteBehaviour;

interface Dialog {
  /** The dialed user of its INVITE: in-dialog requests are counted under it. */
  user: string;
  behaviour: InviteBehaviour;
  inviteHeaders: Map<string, string[]>;
  toTag: string;
  /** The last response to the INVITE, resent when the INVITE is. */
  last?: string;
  final: boolean;
  acked: boolean;
  okTimer?: NodeJS.Timeout;
  rtp?: Socket;
}

const COMPACT: Record<string, string> = {
  v: 'via',
  f: 'from',
  t: 'to',
  i: 'call-id',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
};

interface Parsed {
  request: boolean;
  method: string;
  uri: string;
  headers: Map<string, string[]>;
}

function parse(text: string): Parsed | undefined {
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd >= 0 ? text.slice(0, headEnd) : text;
  const lines = head.split('\r\n');
  const start = lines.shift() ?? '';
  const m = /^([A-Z]+) (\S+) SIP\/2\.0$/.exec(start);
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    let name = line.slice(0, i).trim().toLowerCase();
    name = COMPACT[name] ?? name;
    const value = line.slice(i + 1).trim();
    headers.set(name, [...(headers.get(name) ?? []), value]);
  }
  if (!m) return { request: false, method: '', uri: '', headers };
  return { request: true, method: m[1]!, uri: m[2]!, headers };
}

const one = (h: Map<string, string[]>, name: string): string => h.get(name)?.[0] ?? '';

function userOf(uri: string): string {
  const m = /^sips?:([^@;>]+)@/.exec(uri);
  return m ? decodeURIComponent(m[1]!) : '';
}

export class SipResponder {
  readonly requests: ReceivedRequest[] = [];
  private readonly dialogs = new Map<string, Dialog>();
  private readonly seen = new Set<string>();
  private inviteCount = 0;
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    private readonly plan: InvitePlan,
  ) {
    socket.on('message', (buf, rinfo) => this.onMessage(buf.toString('utf8'), rinfo));
  }

  /** Binds on 127.0.0.1 at `port`, by default one the OS picks (free by construction). */
  static async start(plan: InvitePlan | InviteBehaviour, port = 0): Promise<SipResponder> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, '127.0.0.1', () => resolve());
    });
    const fn: InvitePlan = typeof plan === 'function' ? plan : () => plan;
    return new SipResponder(socket, socket.address().port, fn);
  }

  /** Requests of `method` (first transmissions only), for one user when given. */
  received(method: string, user?: string): ReceivedRequest[] {
    return this.requests.filter(
      (r) => r.method === method && !r.retransmission && (user === undefined || r.user === user),
    );
  }

  /** Resolves with the first request matching, already received or still to come. */
  async waitFor(method: string, user?: string, timeoutMs = 10_000): Promise<ReceivedRequest> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received(method, user)[0];
      if (found) return found;
      if (Date.now() > until)
        throw new Error(
          `far end got no ${method}${user ? ` for ${user}` : ''} in ${timeoutMs} ms; got: ${this.requests
            .map((r) => `${r.method} ${r.user}`)
            .join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const d of this.dialogs.values()) {
      if (d.okTimer) clearInterval(d.okTimer);
      d.rtp?.close();
    }
    this.socket.close();
  }

  private send(text: string, rinfo: RemoteInfo): void {
    if (this.closed) return;
    this.socket.send(Buffer.from(text), rinfo.port, rinfo.address);
  }

  private onMessage(text: string, rinfo: RemoteInfo): void {
    const msg = parse(text);
    if (!msg?.request) return; // responses (to nothing we sent) are ignored
    const callId = one(msg.headers, 'call-id');
    const cseq = parseInt(one(msg.headers, 'cseq'), 10);
    const key = `${callId}\n${cseq}\n${msg.method}`;
    const retransmission = this.seen.has(key);
    this.seen.add(key);
    this.requests.push({
      method: msg.method,
      user: this.dialogs.get(callId)?.user ?? userOf(msg.uri),
      callId,
      cseq,
      at: Date.now(),
      retransmission,
    });
    switch (msg.method) {
      case 'INVITE':
        return this.onInvite(msg, callId, retransmission, rinfo);
      case 'ACK': {
        const d = this.dialogs.get(callId);
        if (d) {
          d.acked = true;
          if (d.okTimer) clearInterval(d.okTimer);
        }
        return;
      }
      case 'CANCEL':
        return this.onCancel(msg, callId, rinfo);
      case 'BYE': {
        const d = this.dialogs.get(callId);
        if (d?.okTimer) clearInterval(d.okTimer);
        this.send(this.response(msg.headers, 200, 'OK', d?.toTag), rinfo);
        return;
      }
      default:
        this.send(this.response(msg.headers, 200, 'OK'), rinfo);
    }
  }

  private onInvite(msg: Parsed, callId: string, again: boolean, rinfo: RemoteInfo): void {
    const known = this.dialogs.get(callId);
    if (again && known) {
      if (known.last) this.send(known.last, rinfo);
      return;
    }
    const user = userOf(msg.uri);
    const behaviour = this.plan({ user, index: this.inviteCount++, callId });
    const d: Dialog = {
      user,
      behaviour,
      inviteHeaders: msg.headers,
      toTag: randomBytes(6).toString('hex'),
      final: false,
      acked: false,
    };
    this.dialogs.set(callId, d);
    const reply = (code: number, reason: string, extra: string[] = [], body = ''): void => {
      const text = this.response(
        d.inviteHeaders,
        code,
        reason,
        code > 100 ? d.toTag : undefined,
        [
          ...extra,
          ...(code > 100 && code < 300 ? [`Contact: <sip:${user}@127.0.0.1:${this.port}>`] : []),
        ],
        body,
      );
      d.last = text;
      if (code >= 200) d.final = true;
      this.send(text, rinfo);
    };
    switch (behaviour.kind) {
      case 'silent':
        return;
      case 'trying-only':
        return reply(100, 'Trying');
      case 'ring':
        reply(100, 'Trying');
        return reply(180, 'Ringing');
      case 'reject':
        reply(100, 'Trying');
        return reply(behaviour.code, behaviour.reason, behaviour.headers);
      case 'answer':
        reply(100, 'Trying');
        reply(180, 'Ringing');
        void this.answer(d, reply, rinfo);
    }
  }

  private async answer(
    d: Dialog,
    reply: (code: number, reason: string, extra?: string[], body?: string) => void,
    rinfo: RemoteInfo,
  ): Promise<void> {
    const rtp = createSocket('udp4');
    d.rtp = rtp;
    await new Promise<void>((resolve) => rtp.bind(0, '127.0.0.1', () => resolve()));
    // Echo every RTP packet back where it came from, so the call has media both ways.
    rtp.on('message', (pkt, from) => {
      if (!this.closed) rtp.send(pkt, from.port, from.address);
    });
    const sdp = [
      'v=0',
      'o=responder 1 1 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${rtp.address().port} RTP/AVP 0 101`,
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=sendrecv',
      '',
    ].join('\r\n');
    if (this.closed || d.final) return;
    reply(200, 'OK', ['Content-Type: application/sdp'], sdp);
    let every = 500;
    const resend = (): void => {
      if (d.acked || this.closed || !d.last) return;
      this.send(d.last, rinfo);
      every = Math.min(every * 2, 4000);
      d.okTimer = setTimeout(resend, every);
    };
    d.okTimer = setTimeout(resend, every);
  }

  private onCancel(msg: Parsed, callId: string, rinfo: RemoteInfo): void {
    const d = this.dialogs.get(callId);
    if (d?.behaviour.kind === 'silent') return;
    this.send(this.response(msg.headers, 200, 'OK', d?.toTag), rinfo);
    if (d && !d.final) {
      const text = this.response(d.inviteHeaders, 487, 'Request Terminated', d.toTag);
      d.last = text;
      d.final = true;
      this.send(text, rinfo);
    }
  }

  private response(
    req: Map<string, string[]>,
    code: number,
    reason: string,
    toTag?: string,
    extra: string[] = [],
    body = '',
  ): string {
    const to = one(req, 'to');
    const lines = [
      `SIP/2.0 ${code} ${reason}`,
      ...(req.get('via') ?? []).map((v) => `Via: ${v}`),
      `From: ${one(req, 'from')}`,
      `To: ${toTag && !/;\s*tag=/i.test(to) ? `${to};tag=${toTag}` : to}`,
      `Call-ID: ${one(req, 'call-id')}`,
      `CSeq: ${one(req, 'cseq')}`,
      'Server: sip-test-responder',
      ...extra,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ];
    return lines.join('\r\n');
  }
}
