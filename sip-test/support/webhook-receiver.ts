// A customer's webhook receiver on loopback (issue 25): every request it
// gets is verified with the `standardwebhooks` library (as a customer would)
// and kept; what it answers is chosen per request. It can stop listening and
// listen again on the same port (a receiver that was down for a while).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  type: string;
  callId: string;
  body: { id: string; type: string; callId: string; data: Record<string, unknown> };
  /** The signature verified with the endpoint's secret. */
  verified: boolean;
  /** What the receiver answered. */
  answered: number;
  at: number;
}

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** The endpoint's signing secret (set once the endpoint is created). */
  secret = '';
  /** The status to answer to the n-th request (0-based) carrying `body`; default 200. */
  answer: (n: number, body: ReceivedWebhook['body']) => number = () => 200;
  /** While set, requests wait for it before they are read and answered (a receiver that stalls). */
  gate: Promise<void> | undefined;
  private server: Server | undefined;

  private constructor(readonly port: number) {}

  static async listen(port = 0): Promise<WebhookReceiver> {
    const r = new WebhookReceiver(port);
    await r.start();
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  /** Listens (again) on its port. */
  async start(): Promise<void> {
    const server = createServer((req, res) => {
      void Promise.all([readBody(req), this.gate]).then(([raw]) => {
        let body: ReceivedWebhook['body'];
        try {
          body = JSON.parse(raw) as ReceivedWebhook['body'];
        } catch {
          res.writeHead(400).end();
          return;
        }
        let verified = false;
        try {
          new Webhook(this.secret).verify(raw, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
        const answered = this.answer(this.received.length, body);
        this.received.push({
          id: String(req.headers['webhook-id']),
          type: body.type,
          callId: body.callId,
          body,
          verified,
          answered,
          at: Date.now(),
        });
        res.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    (this as { port: number }).port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening (connections refused until start()). */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** What was accepted (2xx) for one call, in arrival order. */
  deliveredFor(callId: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.callId === callId && r.answered < 300);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
