// A Node UDP SIP far end for the crash and drain tests: one port for many
// calls, a behaviour scripted per dialed number, and a log of every INVITE
// (by number and Call-ID), ACK, BYE and CANCEL it received. Test fixture
// only: just enough SIP for the daemon's UAC (no auth, no TCP, no PRACK).
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { parseSip, type SipMessage } from '../media/mini-sip.js';
import { allocatePort } from '../runner/sipp-runner.js';

export type Behaviour =
  /** 100, 180, then 200 with SDP; holds the call. `byeAfterMs`: the far end hangs up that long after the ACK. */
  | { kind: 'answer'; byeAfterMs?: number }
  /** 100 and 180, never a final response; a CANCEL gets 200 and the INVITE 487. */
  | { kind: 'ring' }
  /** No response at all (a dead trunk, a lost INVITE). */
  | { kind: 'silent' }
  /** 100, then this final response (e.g. 486 Busy Here). */
  | { kind: 'reject'; status: number; reason: string };

export interface ScriptedUasOptions {
  /** Behaviour of numbers not scripted. Default: answer and hold. */
  defaultBehaviour?: Behaviour;
  /** Answer BYE with 200 (default true). False: BYE is recorded and never answered. */
  answerBye?: boolean;
}

export interface SeenInvite {
  /** Digits of the Request-URI user (the dialed number without '+'). */
  number: string;
  callId: string;
  /** Date.now() when the first INVITE of this Call-ID arrived. */
  at: number;
}

interface Dialog {
  invite: SipMessage;
  number: string;
  toTag: string;
  /** The last response sent to the INVITE (sent again to a retransmission). */
  last?: Buffer;
  state: 'proceeding' | 'answered' | 'ended';
  timers: NodeJS.Timeout[];
}

/** Digits only: '+1 212-555-0100' and 'sip:+12125550100@h' both → '12125550100'. */
export const digits = (number: string): string => number.replace(/[^0-9]/g, '');

const header = (m: SipMessage, name: string): string => m.headers.get(name)?.[0] ?? '';

function serialize(startLine: string, headers: [string, string][], body = ''): Buffer {
  const lines = [startLine, ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (body) lines.push('Content-Type: application/sdp');
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`, '', body);
  return Buffer.from(lines.join('\r\n'));
}

export class ScriptedUas {
  /** The first INVITE of every Call-ID, in arrival order. */
  readonly invites: SeenInvite[] = [];
  /** INVITE datagrams received per Call-ID (retransmissions included). */
  readonly inviteDatagrams = new Map<string, number>();
  /** BYE datagrams received per Call-ID (retransmissions included). */
  readonly byes = new Map<string, number>();
  readonly acks = new Map<string, number>();
  readonly cancels = new Map<string, number>();
  /** Call-IDs this far end answered with 200. */
  readonly answered = new Set<string>();
  private readonly script = new Map<string, Behaviour>();
  private readonly dialogs = new Map<string, Dialog>();
  private seq = 0;

  private constructor(
    private readonly socket: Socket,
    /** Bound so the RTP sent to the SDP's port lands somewhere (and is dropped). */
    private readonly rtpSink: Socket,
    private readonly options: ScriptedUasOptions,
  ) {
    socket.on('message', (data, rinfo) => {
      try {
        this.onMessage(parseSip(data, rinfo));
      } catch {
        /* not SIP we understand: ignored */
      }
    });
    rtpSink.on('message', () => undefined);
  }

  static async start(options: ScriptedUasOptions = {}): Promise<ScriptedUas> {
    const bind = async (port: number): Promise<Socket> => {
      const s = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.bind(port, '127.0.0.1', () => {
          s.off('error', reject);
          resolve();
        });
      });
      return s;
    };
    const sip = await bind(await allocatePort());
    const rtp = await bind(0);
    return new ScriptedUas(sip, rtp, options);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** What the far end does with INVITEs to `number` (any formatting). */
  set(number: string, behaviour: Behaviour): void {
    this.script.set(digits(number), behaviour);
  }

  /** Distinct Call-IDs of the INVITEs to `number`. */
  callIdsFor(number: string): Set<string> {
    const n = digits(number);
    return new Set(this.invites.filter((i) => i.number === n).map((i) => i.callId));
  }

  /** The INVITEs to `number` that arrived at or after `since` (Date.now()). */
  invitesSince(number: string, since: number): SeenInvite[] {
    const n = digits(number);
    return this.invites.filter((i) => i.number === n && i.at >= since);
  }

  close(): void {
    for (const d of this.dialogs.values()) for (const t of d.timers) clearTimeout(t);
    for (const s of [this.socket, this.rtpSink]) {
      try {
        s.close();
      } catch {
        /* already closed */
      }
    }
  }

  private onMessage(m: SipMessage): void {
    if (m.startLine.startsWith('SIP/2.0')) return; // responses (to our BYE): nothing to do
    const method = m.startLine.split(' ')[0]!;
    const callId = header(m, 'call-id');
    const bump = (map: Map<string, number>) => map.set(callId, (map.get(callId) ?? 0) + 1);
    switch (method) {
      case 'INVITE':
        bump(this.inviteDatagrams);
        return this.onInvite(m, callId);
      case 'ACK':
        bump(this.acks);
        return this.onAck(callId);
      case 'BYE':
        bump(this.byes);
        this.end(callId);
        if (this.options.answerBye ?? true) this.respond(m, '200 OK');
        return;
      case 'CANCEL':
        bump(this.cancels);
        return this.onCancel(m, callId);
      default:
        // OPTIONS and anything else out of or in a dialog: 200 (with no body).
        this.respond(m, '200 OK');
    }
  }

  private onInvite(m: SipMessage, callId: string): void {
    const known = this.dialogs.get(callId);
    if (known) {
      // A retransmission (or an auth retry, which we never ask for): the last response again.
      if (known.last) this.send(known.last, m.source);
      return;
    }
    const uri = m.startLine.split(' ')[1] ?? '';
    const number = digits(/^sips?:([^@;]+)/.exec(uri)?.[1] ?? '');
    this.invites.push({ number, callId, at: Date.now() });
    const d: Dialog = {
      invite: m,
      number,
      toTag: `far${++this.seq}`,
      state: 'proceeding',
      timers: [],
    };
    this.dialogs.set(callId, d);
    const b = this.script.get(number) ?? this.options.defaultBehaviour ?? { kind: 'answer' };
    if (b.kind === 'silent') return;
    this.reply(d, '100 Trying', false);
    if (b.kind === 'reject') {
      d.state = 'ended';
      return this.reply(d, `${b.status} ${b.reason}`);
    }
    this.reply(d, '180 Ringing');
    if (b.kind === 'ring') return;
    this.reply(d, '200 OK', true, this.sdp());
    d.state = 'answered';
    this.answered.add(callId);
    if (b.byeAfterMs !== undefined) {
      d.timers.push(setTimeout(() => this.sendBye(callId, d), b.byeAfterMs));
    }
  }

  private onAck(callId: string): void {
    const d = this.dialogs.get(callId);
    if (d && d.state === 'answered') d.last = undefined; // no 200 retransmission once ACKed
  }

  private onCancel(m: SipMessage, callId: string): void {
    this.respond(m, '200 OK');
    const d = this.dialogs.get(callId);
    if (!d || d.state !== 'proceeding') return;
    d.state = 'ended';
    this.reply(d, '487 Request Terminated');
  }

  private end(callId: string): void {
    const d = this.dialogs.get(callId);
    if (!d) return;
    d.state = 'ended';
    for (const t of d.timers) clearTimeout(t);
  }

  /** A response to the dialog's INVITE; kept for retransmissions unless `keep` is false. */
  private reply(d: Dialog, status: string, keep = true, body = ''): void {
    const buf = this.response(d.invite, status, status.startsWith('100') ? '' : d.toTag, body);
    if (keep) d.last = buf;
    this.send(buf, d.invite.source);
  }

  /** A stateless response to any request (BYE, CANCEL, OPTIONS). */
  private respond(req: SipMessage, status: string): void {
    const to = header(req, 'to');
    const tag = to.includes('tag=') ? '' : 'far0';
    this.send(this.response(req, status, tag), req.source);
  }

  private response(req: SipMessage, status: string, tag: string, body = ''): Buffer {
    const to = header(req, 'to');
    const headers: [string, string][] = [
      ...(req.headers.get('via') ?? []).map((v): [string, string] => ['Via', v]),
      ['From', header(req, 'from')],
      ['To', tag && !to.includes('tag=') ? `${to};tag=${tag}` : to],
      ['Call-ID', header(req, 'call-id')],
      ['CSeq', header(req, 'cseq')],
      ['Contact', `<sip:far@127.0.0.1:${this.port}>`],
    ];
    return serialize(`SIP/2.0 ${status}`, headers, body);
  }

  private sendBye(callId: string, d: Dialog): void {
    if (d.state !== 'answered') return;
    d.state = 'ended';
    const inv = d.invite;
    const contact = /<([^>]+)>/.exec(header(inv, 'contact'))?.[1] ?? `sip:gw@127.0.0.1`;
    const headers: [string, string][] = [
      [
        'Via',
        `SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${Math.random().toString(36).slice(2)}`,
      ],
      ['From', `${header(inv, 'to')};tag=${d.toTag}`],
      ['To', header(inv, 'from')],
      ['Call-ID', callId],
      ['CSeq', '1 BYE'],
      ['Max-Forwards', '70'],
    ];
    this.send(serialize(`BYE ${contact} SIP/2.0`, headers), inv.source);
  }

  private sdp(): string {
    const port = this.rtpSink.address().port;
    return [
      'v=0',
      `o=far ${this.seq} ${this.seq} IN IP4 127.0.0.1`,
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${port} RTP/AVP 0`,
      'a=rtpmap:0 PCMU/8000',
      'a=sendrecv',
      '',
    ].join('\r\n');
  }

  private send(buf: Buffer, to: RemoteInfo): void {
    try {
      this.socket.send(buf, to.port, to.address);
    } catch {
      /* socket closed at the end of a test */
    }
  }
}
