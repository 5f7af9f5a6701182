// A client for baresip's ctrl_tcp module: netstrings ("<len>:<json>,") over
// TCP. Requests are {command, params, token}; baresip answers
// {response: true, ok, data, token} and pushes {event: true, type, ...} for
// call events (CALL_ESTABLISHED, CALL_RTPESTAB, CALL_CLOSED, ...).
import { connect, type Socket } from 'node:net';

export interface BaresipEvent {
  /** e.g. CALL_INCOMING, CALL_ESTABLISHED, CALL_RTPESTAB, CALL_CLOSED, CALL_REMOTE_SDP. */
  type: string;
  class: string | undefined;
  direction: string | undefined;
  peerUri: string | undefined;
  /** The call's SIP Call-ID. */
  callId: string | undefined;
  /** Event detail: the close reason for CALL_CLOSED, 'offer'/'answer' for the SDP events. */
  param: string | undefined;
  /** Date.now() when it arrived. */
  at: number;
}

interface Pending {
  resolve: (data: string) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class BaresipControl {
  readonly events: BaresipEvent[] = [];
  private readonly pending = new Map<string, Pending>();
  private buf = Buffer.alloc(0);
  private seq = 0;
  private readonly listeners = new Set<(e: BaresipEvent) => void>();

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => {
      /* reported through close */
    });
    socket.on('close', () => {
      for (const [token, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new Error(`baresip ctrl_tcp closed before answering ${token}`));
      }
      this.pending.clear();
    });
  }

  static connect(port: number, timeoutMs = 3000): Promise<BaresipControl> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('baresip ctrl_tcp: connect timed out'));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new BaresipControl(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  /** Runs a command (as typed in baresip's menu, e.g. 'hangup', 'dial', 'callstat') and resolves with its output. */
  command(command: string, params = '', timeoutMs = 3000): Promise<string> {
    const token = `t${++this.seq}`;
    const json = Buffer.from(JSON.stringify({ command, params, token }));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new Error(`baresip ctrl_tcp: no answer to '${command}' in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(token, { resolve, reject, timer });
      this.socket.write(Buffer.concat([Buffer.from(`${json.length}:`), json, Buffer.from(',')]));
    });
  }

  onEvent(listener: (e: BaresipEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const colon = this.buf.indexOf(0x3a);
      if (colon < 0) return;
      const len = Number(this.buf.toString('ascii', 0, colon));
      if (!Number.isInteger(len)) {
        // out of sync: drop what we have
        this.buf = Buffer.alloc(0);
        return;
      }
      if (this.buf.length < colon + 1 + len + 1) return;
      const body = this.buf.toString('utf8', colon + 1, colon + 1 + len);
      this.buf = this.buf.subarray(colon + 1 + len + 1);
      try {
        this.onMessage(JSON.parse(body) as Record<string, unknown>);
      } catch {
        /* not JSON: ignore */
      }
    }
  }

  private onMessage(m: Record<string, unknown>): void {
    if (m.event === true) {
      const e: BaresipEvent = {
        type: str(m.type) ?? '',
        class: str(m.class),
        direction: str(m.direction),
        peerUri: str(m.peeruri),
        callId: str(m.id),
        param: str(m.param),
        at: Date.now(),
      };
      this.events.push(e);
      for (const l of this.listeners) l(e);
      return;
    }
    const token = str(m.token);
    const p = token === undefined ? undefined : this.pending.get(token);
    if (!p || token === undefined) return;
    this.pending.delete(token);
    clearTimeout(p.timer);
    if (m.ok === false) p.reject(new Error(`baresip: command failed: ${str(m.data) ?? ''}`));
    else p.resolve(str(m.data) ?? '');
  }
}
