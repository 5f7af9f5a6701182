// HTTP load shedding: refuse at once what cannot be served in time, instead
// of queueing it (DESIGN, reliability rules). Two gates, both answering 503
// server_unavailable with Retry-After in the catalogue shape:
// - @fastify/under-pressure: event-loop delay, heap and RSS thresholds, for
//   every route but the public ones (a load balancer must still see
//   /healthz, /readyz and /metrics);
// - a cap on initiate-call requests being handled at once, so a burst is
//   refused in microseconds rather than waiting its turn behind the SQLite
//   writes of the ones before it.
// Refusals are logged as a count at most once a second, never one line each.
import underPressure from '@fastify/under-pressure';
import type {
  FastifyInstance,
  onRequestAsyncHookHandler,
  onResponseAsyncHookHandler,
} from 'fastify';
import { realTimers, type Timers } from '../calls/timers.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import { ApiError } from './error-catalogue.js';

export type LoadSheddingConfig = Pick<
  Config['http'],
  | 'maxEventLoopDelayMs'
  | 'maxHeapUsedMb'
  | 'maxRssMb'
  | 'maxCallRequestsInFlight'
  | 'overloadRetryAfterSeconds'
>;

/** A 503 that says when to come back. */
export class UnavailableError extends ApiError {
  constructor(
    reason: string,
    readonly retryAfterSeconds: number,
  ) {
    super('server_unavailable', reason);
  }
}

const MB = 1024 * 1024;
const PUBLIC = new Set(['/healthz', '/readyz', '/metrics']);

/** Loop delay in the first samples is start-up work (module loading, migrations), not load. */
const START_GRACE_MS = 1000;

export async function registerPressureGate(
  app: FastifyInstance,
  cfg: LoadSheddingConfig,
  clock: Clock,
): Promise<void> {
  let readyAt = Infinity;
  app.addHook('onReady', async () => {
    readyAt = clock.now();
  });
  await app.register(underPressure, {
    sampleInterval: 100,
    maxEventLoopDelay: cfg.maxEventLoopDelayMs,
    maxHeapUsedBytes: cfg.maxHeapUsedMb * MB,
    maxRssBytes: cfg.maxRssMb * MB,
    // A rejection reaches the error handler (catalogue body, Retry-After); nothing returned lets it through.
    pressureHandler: async (request, _reply, type) => {
      if (PUBLIC.has(request.routeOptions.url ?? '')) return;
      if (type === 'eventLoopDelay' && clock.now() - readyAt < START_GRACE_MS + 100) return;
      throw new UnavailableError(
        `The gateway is overloaded (${type}); retry after the Retry-After seconds.`,
        cfg.overloadRetryAfterSeconds,
      );
    },
  });
}

/** Route hooks that cap the requests of one route being handled at once. */
export function inFlightCap(cfg: LoadSheddingConfig): {
  onRequest: onRequestAsyncHookHandler;
  onResponse: onResponseAsyncHookHandler;
  release(request: object): void;
} {
  let inFlight = 0;
  const counted = new WeakSet<object>();
  const release = (request: object): void => {
    if (counted.delete(request)) inFlight--;
  };
  return {
    onRequest: async (request) => {
      if (inFlight >= cfg.maxCallRequestsInFlight) {
        throw new UnavailableError(
          `${inFlight} calls are being placed right now; retry after the Retry-After seconds.`,
          cfg.overloadRetryAfterSeconds,
        );
      }
      inFlight++;
      counted.add(request);
    },
    // onResponse runs for every request that got an answer, errors included.
    onResponse: async (request) => release(request),
    /** The request's work is done; what is left (the disk) holds no place (idempotent). */
    release,
  };
}

export interface RefusalLog {
  info(obj: object, msg: string): void;
}

/**
 * Counts 503 refusals and logs them as one line per second at most (a
 * draining or overloaded daemon refuses hundreds a second).
 */
export class RefusalCounter {
  private count = 0;
  private timer: unknown;

  constructor(
    private readonly log: RefusalLog | undefined,
    private readonly timers: Pick<Timers, 'setTimeout' | 'clearTimeout'> = realTimers,
    private readonly periodMs = 1000,
  ) {}

  note(): void {
    this.count++;
    if (this.timer !== undefined || !this.log) return;
    this.timer = this.timers.setTimeout(() => this.flush(), this.periodMs);
  }

  flush(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.count === 0) return;
    this.log?.info({ refused: this.count, periodMs: this.periodMs }, 'requests refused with 503');
    this.count = 0;
  }
}
