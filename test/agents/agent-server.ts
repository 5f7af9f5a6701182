/**
 * A WebSocket server on loopback (port 0) playing an AI agent, for tests of
 * the daemon's agent client. It records every frame the daemon sends; the
 * agent behaviours (vocode-like, pipecat-like) are built on `AgentSession`.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export type JsonMessage = Record<string, unknown> & { event: string };

export interface StartMessage extends JsonMessage {
  event: 'start';
  streamSid: string;
  start: Record<string, unknown>;
}

type Waiter = { match: (m: JsonMessage) => boolean; resolve: (m: JsonMessage) => void };

/** One daemon connection as the agent sees it. */
export class AgentSession {
  /** Every text frame, parsed, in order (unparseable ones as `{event: '<raw>'}`). */
  readonly messages: JsonMessage[] = [];
  /** Every binary frame, in order. */
  readonly binaryFrames: Buffer[] = [];
  /** Upgrade request headers. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Waiter[] = [];

  constructor(
    readonly ws: WebSocket,
    headers: Record<string, string | string[] | undefined>,
  ) {
    this.headers = headers;
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
    );
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        this.binaryFrames.push(data);
        return;
      }
      let m: JsonMessage;
      try {
        m = JSON.parse(data.toString('utf8')) as JsonMessage;
      } catch {
        m = { event: '<raw>', raw: data.toString('utf8') };
      }
      this.messages.push(m);
      const still: Waiter[] = [];
      for (const w of this.waiters) {
        if (w.match(m)) w.resolve(m);
        else still.push(w);
      }
      this.waiters = still;
    });
  }

  /** The first message matching, already received or still to come. */
  waitFor(match: (m: JsonMessage) => boolean, timeoutMs = 5000): Promise<JsonMessage> {
    const seen = this.messages.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('agent: message not received')), timeoutMs);
      this.waiters.push({
        match,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  waitForEvent(event: string, timeoutMs?: number): Promise<JsonMessage> {
    return this.waitFor((m) => m.event === event, timeoutMs);
  }

  started(timeoutMs?: number): Promise<StartMessage> {
    return this.waitForEvent('start', timeoutMs) as Promise<StartMessage>;
  }

  send(message: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  /** The daemon's media payloads so far, decoded and joined. */
  inboundAudio(): Buffer {
    const parts = this.messages
      .filter((m) => m.event === 'media')
      .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64'));
    return Buffer.concat([...parts, ...this.binaryFrames]);
  }
}

export class AgentServer {
  readonly sessions: AgentSession[] = [];
  private sessionWaiters: (() => void)[] = [];

  private constructor(
    private readonly wss: WebSocketServer,
    readonly url: string,
    private readonly onSession: (s: AgentSession) => void,
  ) {
    wss.on('connection', (ws, req) => {
      const session = new AgentSession(ws, req.headers);
      this.sessions.push(session);
      this.onSession(session);
      const waiters = this.sessionWaiters;
      this.sessionWaiters = [];
      for (const w of waiters) w();
    });
  }

  /** Listens on 127.0.0.1, port from the OS; `onSession` runs the behaviour. */
  static async listen(onSession: (s: AgentSession) => void = () => {}): Promise<AgentServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const { port } = wss.address() as AddressInfo;
    return new AgentServer(wss, `ws://127.0.0.1:${port}/agent`, onSession);
  }

  /** The `index`-th connection (0 = the first), once it has come. */
  async session(index = 0): Promise<AgentSession> {
    for (;;) {
      const s = this.sessions[index];
      if (s) return s;
      await new Promise<void>((resolve) => this.sessionWaiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/** Polls `cond` every 5 ms until true; throws after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
