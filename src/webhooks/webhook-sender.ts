// Sends one webhook request (issue 25): undici with keep-alive connections
// per origin, a connect/headers/body timeout, and every connection's address
// checked by the DestinationGuard (IP literals before connecting, names at
// their lookup). Answers the status and Retry-After; throws on network errors.
import { Agent, request } from 'undici';
import type { DestinationGuard } from '../net/destination-guard.js';

export interface WebhookResponse {
  status: number;
  retryAfter: string | null;
}

export type WebhookSend = (
  url: string,
  headers: Record<string, string>,
  body: string,
) => Promise<WebhookResponse>;

/** A refused destination: permanent, not retried. */
export class DestinationRefused extends Error {
  readonly code = 'EDESTINATIONREFUSED';
}

export function webhookSender(
  guard: DestinationGuard,
  timeoutMs: number,
): {
  send: WebhookSend;
  close(): Promise<void>;
} {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 8,
    connect: { timeout: timeoutMs, lookup: guard.lookup },
  });
  return {
    async send(url, headers, body) {
      const refused = guard.literalRefusal(new URL(url));
      if (refused) throw new DestinationRefused(`destination refused: a ${refused} address`);
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ai-call-gateway',
          ...headers,
        },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump();
      const retryAfter = res.headers['retry-after'];
      return {
        status: res.statusCode,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      };
    },
    close: () => agent.close(),
  };
}
