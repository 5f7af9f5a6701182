// Standard Webhooks signatures (https://www.standardwebhooks.com/): the
// `webhook-id`, `webhook-timestamp` and `webhook-signature` headers, the
// signature HMAC-SHA256 over `id.timestamp.body` with the endpoint's secret
// (`whsec_` + base64), computed by the `standardwebhooks` package so that
// receivers verify with any off-the-shelf library. During a rotation's
// overlap both secrets sign (space-separated signatures, as the scheme allows).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { WebhookSecrets } from '../model/webhook.js';

/** A new signing secret: 32 random bytes, `whsec_` + base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The headers that sign `body` for event `id` at `nowMs`. */
export function signWebhook(
  secrets: WebhookSecrets,
  id: string,
  nowMs: number,
  body: string,
): SignedHeaders {
  const at = new Date(nowMs);
  const signatures = [new Webhook(secrets.current).sign(id, at, body)];
  if (
    secrets.previous &&
    secrets.previousExpiresAt &&
    Date.parse(secrets.previousExpiresAt) > nowMs
  ) {
    signatures.push(new Webhook(secrets.previous).sign(id, at, body));
  }
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(nowMs / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
