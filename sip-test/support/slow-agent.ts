// A quiet AI agent that takes `acceptDelayMs` to accept each WebSocket
// (a far-away or busy agent). The daemon connects the agent before it sends
// the INVITE, so for that long an accepted call has not been dialed yet.
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export class SlowAgent {
  private readonly sockets = new Set<WebSocket>();

  private constructor(
    private readonly wss: WebSocketServer,
    readonly url: string,
  ) {
    wss.on('connection', (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => undefined);
    });
  }

  static async listen(acceptDelayMs: number): Promise<SlowAgent> {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (_info, done) => void setTimeout(() => done(true), acceptDelayMs),
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const { port } = wss.address() as AddressInfo;
    return new SlowAgent(wss, `ws://127.0.0.1:${port}/slow-agent`);
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    // A handshake still waiting its delay may hold the server open: give up after a second.
    await Promise.race([
      new Promise<void>((resolve) => this.wss.close(() => resolve())),
      new Promise<void>((resolve) => setTimeout(resolve, 1000).unref()),
    ]);
  }
}
