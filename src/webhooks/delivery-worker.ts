// The webhook delivery worker (issue 25 item 4): sends what the outbox holds
// due, signed, a bounded number at a time, and writes each outcome: 2xx
// delivered; a network error, 408, 429 or 5xx tried again later (back-off
// with jitter, the receiver's Retry-After) until the retry window from the
// event closes; any other answer, or a refused destination, failed for good.
// At least once: a delivery is marked only after its answer, so one sent just
// before a crash is sent again after the restart (same event id: the
// receiver's idempotency key). A call's events reach an endpoint in order:
// the outbox hands out a call's next delivery only once the earlier ones are
// no longer pending.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Timers } from '../calls/timers.js';
import type { DueDelivery } from '../model/webhook.js';
import { nextAttemptAt } from './retry-schedule.js';
import { signWebhook } from './webhook-signer.js';
import { DestinationRefused, type WebhookResponse, type WebhookSend } from './webhook-sender.js';

/** What the worker needs of the outbox (store/webhook-repository.ts). */
export interface WebhookOutbox {
  due(nowMs: number, limit: number): DueDelivery[];
  markDelivered(id: string, responseCode: number, at: string): void;
  markRetry(id: string, responseCode: number, error: string | null, nextAttemptMs: number): void;
  markFailed(id: string, responseCode: number, error: string | null): void;
  prune(beforeIso: string): { deliveries: number; events: number };
}

export interface DeliveryWorkerSettings {
  /** How often the outbox is looked at when nothing pokes the worker. */
  pollIntervalMs: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Retries stop this long after the event was written. */
  retryWindowMs: number;
  /** The first retry's delay (doubling after). */
  retryBaseMs: number;
  /** Finished deliveries and their events are deleted after this long. */
  retentionMs: number;
}

export type DeliveryResult = 'delivered' | 'retry' | 'failed';

const PRUNE_EVERY_MS = 3_600_000;
const STOP_WAIT_MS = 5_000;

export class DeliveryWorker {
  private readonly inFlight = new Map<string, Promise<void>>();
  private poll: unknown;
  private pruner: unknown;
  private passing = false;
  private again = false;
  private stopped = false;
  /** Outcomes since the start, for /metrics. */
  readonly results: Record<DeliveryResult, number> = { delivered: 0, retry: 0, failed: 0 };
  /** Milliseconds from an event's write to its delivery (each delivered one), for the benchmark. */
  onDelivered?: (lagMs: number) => void;

  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly log: Logger,
    private readonly settings: DeliveryWorkerSettings,
    private readonly send: WebhookSend,
    /**
     * Resolves once the outbox's writes so far are on disk: an event is
     * reported only once the state it reports would survive a power loss
     * (the store's group fsync, docs/decisions/group-commit.md).
     */
    private readonly durable: () => Promise<void> = () => Promise.resolve(),
  ) {}

  start(): void {
    this.poll = this.timers.setInterval(() => this.poke(), this.settings.pollIntervalMs);
    this.pruner = this.timers.setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.prune();
    this.poke();
  }

  /** Something was written to the outbox (or a slot freed): look now. */
  poke(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = true;
    try {
      do {
        this.again = false;
        this.pass();
      } while (this.again);
    } catch (err) {
      this.log.error({ err }, 'webhook outbox not read');
    } finally {
      this.passing = false;
    }
  }

  /** Stops taking deliveries; waits (bounded) for those in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timers.clearInterval(this.poll);
    this.timers.clearInterval(this.pruner);
    let timer: unknown;
    await Promise.race([
      Promise.allSettled([...this.inFlight.values()]),
      new Promise<void>((r) => (timer = this.timers.setTimeout(r, STOP_WAIT_MS))),
    ]);
    this.timers.clearTimeout(timer);
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private pass(): void {
    const room = this.settings.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const due = this.outbox
      .due(this.clock.now(), room + this.inFlight.size)
      .filter((d) => !this.inFlight.has(d.id))
      .slice(0, room);
    for (const d of due) {
      const sending = this.deliver(d).finally(() => {
        this.inFlight.delete(d.id);
        this.poke();
      });
      this.inFlight.set(d.id, sending);
    }
  }

  private async deliver(d: DueDelivery): Promise<void> {
    const sentAt = this.clock.now();
    let res: WebhookResponse | undefined;
    let error: string | null = null;
    let permanent = false;
    try {
      await this.durable();
      const headers = signWebhook(d.secrets, d.eventId, sentAt, d.body);
      res = await this.send(d.url, { ...headers }, d.body);
    } catch (err) {
      permanent = err instanceof DestinationRefused || hasCode(err, 'EDESTINATIONREFUSED');
      error = describe(err);
    }
    try {
      this.record(d, res, error, permanent);
    } catch (err) {
      this.log.error({ err, deliveryId: d.id }, 'webhook delivery outcome not written');
    }
  }

  private record(
    d: DueDelivery,
    res: WebhookResponse | undefined,
    error: string | null,
    permanent: boolean,
  ): void {
    const now = this.clock.now();
    const status = res?.status ?? 0;
    const log = { deliveryId: d.id, endpointId: d.endpointId, status, attempt: d.attempts + 1 };
    if (status >= 200 && status < 300) {
      this.outbox.markDelivered(d.id, status, new Date(now).toISOString());
      this.results.delivered++;
      this.onDelivered?.(now - Date.parse(d.createdAt));
      return;
    }
    const retryable =
      !permanent && (status === 0 || status === 408 || status === 429 || status >= 500);
    const why = error ?? `HTTP ${status}`;
    const next = retryable
      ? nextAttemptAt({
          attempts: d.attempts + 1,
          nowMs: now,
          eventAtMs: Date.parse(d.createdAt),
          windowMs: this.settings.retryWindowMs,
          baseMs: this.settings.retryBaseMs,
          retryAfter: res?.retryAfter ?? null,
        })
      : undefined;
    if (next !== undefined) {
      this.outbox.markRetry(d.id, status, why, next);
      this.results.retry++;
      this.log.info({ ...log, retryInMs: next - now }, 'webhook not delivered: tried again later');
      return;
    }
    const final = retryable ? `${why}; retry window closed` : why;
    this.outbox.markFailed(d.id, status, final);
    this.results.failed++;
    this.log.warn({ ...log, reason: final }, 'webhook delivery failed for good');
  }

  private prune(): void {
    try {
      const before = new Date(this.clock.now() - this.settings.retentionMs).toISOString();
      const pruned = this.outbox.prune(before);
      if (pruned.deliveries + pruned.events > 0) this.log.info(pruned, 'webhook outbox pruned');
    } catch (err) {
      this.log.warn({ err }, 'webhook outbox not pruned');
    }
  }
}

function hasCode(err: unknown, code: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ((e as NodeJS.ErrnoException).code === code) return true;
  }
  return false;
}

/** A network error in words: its code and message (never the URL, which may carry a token). */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 3; e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    parts.push(code ? `${code}: ${e.message}` : e.message);
  }
  return parts.join(' / ').slice(0, 300) || 'network error';
}
