// The SignalingPort on drachtio-srf: one inbound connection to a
// drachtio-server (srf.connect), kept up with our own back-off, and
// outgoing call legs over it. drachtio-srf's built-in reconnect is turned
// off (maxAttempts 1) so that one loop, with an injected clock, owns retries.

import Srf from 'drachtio-srf';
import type { SessionTimerRequest } from '../dialog/session-timer.js';
import { generateCallId } from '../message/index.js';
import { systemClock, type Clock, type TimerHandle } from '../transport/clock.js';
import { silentLogger, type SipLogger } from '../transport/logger.js';
import type { InviteOptions } from '../ua/call-leg-types.js';
import { TypedEmitter } from '../ua/typed-emitter.js';
import { DrachtioLeg } from './drachtio-leg.js';
import type { SrfLike } from './srf-types.js';

export interface DrachtioConfig {
  /** drachtio-server address of its admin (client) port. */
  host: string;
  /** Admin port; drachtio-server's default is 9022. */
  port: number;
  /** The shared secret configured on drachtio-server. */
  secret: string;
}

export interface ReconnectPolicy {
  /** First retry delay (default 500 ms). */
  initialMs: number;
  /** Ceiling of the delay (default 15 s). */
  maxMs: number;
  /** Growth per failed attempt (default 2). */
  factor: number;
}

export interface DrachtioDeps {
  logger?: SipLogger;
  /** Default: the real clock (timers unref'd). */
  clock?: Clock;
  /** Default: a new drachtio-srf `Srf`. Tests pass an in-memory fake. */
  createSrf?: () => SrfLike;
  reconnect?: Partial<ReconnectPolicy>;
  /** RFC 3261 §9.1 guard after a CANCEL: default 64*T1 = 32 s. */
  cancelGuardMs?: number;
  /** RFC 4028 on our INVITEs (default: not asked for). */
  sessionTimer?: SessionTimerRequest;
}

export interface DrachtioSignalingEvents {
  /** Authenticated to drachtio-server; `hostport` lists its SIP transports. */
  connected: { hostport?: string };
  /** The connection dropped; a retry is scheduled in `retryInMs`. */
  disconnected: { retryInMs: number };
}

const DEFAULT_POLICY: ReconnectPolicy = { initialMs: 500, maxMs: 15_000, factor: 2 };

/** The delay before retry number `attempt` (0-based): exponential, capped. */
export function backoffDelay(policy: ReconnectPolicy, attempt: number): number {
  return Math.min(policy.maxMs, Math.round(policy.initialMs * policy.factor ** attempt));
}

export class DrachtioError extends Error {
  constructor(
    readonly code: 'auth_failed' | 'stopped',
    message: string,
  ) {
    super(message);
    this.name = 'DrachtioError';
  }
}

export class DrachtioSignaling extends TypedEmitter<DrachtioSignalingEvents> {
  private readonly clock: Clock;
  private readonly log: SipLogger;
  private readonly policy: ReconnectPolicy;
  private readonly legs = new Set<DrachtioLeg>();
  private srf: SrfLike | undefined;
  private connected = false;
  private started = false;
  private stopped = false;
  private attempt = 0;
  private retryTimer: TimerHandle | undefined;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private hostport: string | undefined;

  constructor(
    private readonly config: DrachtioConfig,
    private readonly deps: DrachtioDeps = {},
  ) {
    super();
    this.clock = deps.clock ?? systemClock;
    this.log = deps.logger ?? silentLogger;
    this.policy = { ...DEFAULT_POLICY, ...deps.reconnect };
  }

  /** Starts connecting (once) and resolves when drachtio-server accepted our
   *  secret. Connection errors are retried with back-off and keep the promise
   *  pending; a refused secret rejects it (retries go on in the background). */
  connect(): Promise<void> {
    if (this.stopped) return Promise.reject(new DrachtioError('stopped', 'stopped'));
    if (this.connected) return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.started) {
      this.started = true;
      this.srf = (this.deps.createSrf ?? defaultSrf)();
      this.listen(this.srf);
      this.dial();
    }
    return p;
  }

  /** Readiness: authenticated to drachtio-server right now. */
  isConnected(): boolean {
    return this.connected;
  }

  /** drachtio-server's SIP host-ports, as it announced them on connect. */
  get serverHostport(): string | undefined {
    return this.hostport;
  }

  get liveLegs(): number {
    return this.legs.size;
  }

  /** SignalingPort: sends an INVITE through drachtio-server. Without a
   *  connection the leg fails at once with 503, cause 'transport'. */
  invite(request: InviteOptions): DrachtioLeg {
    const srf = this.srf;
    const leg = new DrachtioLeg(
      srf ?? notConnectedSrf,
      request,
      request.callId ?? generateCallId(request.target.host),
      {
        clock: this.clock,
        log: this.log,
        cancelGuardMs: this.deps.cancelGuardMs ?? 32_000,
        onDone: (l) => this.legs.delete(l),
        ...(this.deps.sessionTimer ? { sessionTimer: this.deps.sessionTimer } : {}),
      },
    );
    if (!this.connected || !srf) {
      void Promise.resolve().then(() =>
        leg.fail({ status: 503, reason: 'Service Unavailable', cause: 'transport' }),
      );
      return leg;
    }
    this.legs.add(leg);
    leg.start();
    return leg;
  }

  /** Stops retrying and closes the connection. Drain live calls first. */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) this.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new DrachtioError('stopped', 'stopped'));
    if (this.srf && this.connected) {
      try {
        this.srf.disconnect();
      } catch {
        // already closed
      }
    }
    this.connected = false;
    return Promise.resolve();
  }

  private listen(srf: SrfLike): void {
    srf.on('connect', (err, hostport) => {
      if (this.stopped) return;
      if (err) {
        // A refused secret: the server is up but will not take us.
        this.log.error(
          { host: this.config.host, port: this.config.port },
          'drachtio-server refused our secret',
        );
        const waiters = this.waiters;
        this.waiters = [];
        for (const w of waiters)
          w.reject(new DrachtioError('auth_failed', 'drachtio-server refused the secret'));
        this.gone();
        return;
      }
      this.connected = true;
      this.attempt = 0;
      this.hostport = hostport;
      this.log.info(
        { host: this.config.host, port: this.config.port, hostport },
        'connected to drachtio-server',
      );
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w.resolve();
      this.emit('connected', hostport === undefined ? {} : { hostport });
    });
    srf.on('error', (err) => {
      if (this.stopped) return;
      this.log.warn(
        {
          host: this.config.host,
          port: this.config.port,
          err: err instanceof Error ? err.message : String(err),
        },
        'drachtio-server connection error',
      );
      this.gone();
    });
    srf.on('close', () => {
      if (!this.stopped) this.gone();
    });
  }

  private dial(): void {
    this.srf?.connect({
      host: this.config.host,
      port: this.config.port,
      secret: this.config.secret,
      reconnect: { maxAttempts: 1 },
    });
  }

  /** The connection is down (or never came up): readiness false, live legs
   *  ended, one retry scheduled with back-off. */
  private gone(): void {
    const wasConnected = this.connected;
    this.connected = false;
    if (wasConnected) {
      this.log.warn(
        { host: this.config.host, port: this.config.port, liveLegs: this.legs.size },
        'lost drachtio-server connection',
      );
      for (const leg of [...this.legs]) leg.connectionLost();
    }
    if (this.retryTimer !== undefined || this.stopped) return;
    const delay = backoffDelay(this.policy, this.attempt++);
    this.retryTimer = this.clock.setTimer(() => {
      this.retryTimer = undefined;
      if (!this.stopped) this.dial();
    }, delay);
    this.log.info(
      { retryInMs: delay, attempt: this.attempt },
      'drachtio-server reconnect scheduled',
    );
    this.emit('disconnected', { retryInMs: delay });
  }
}

/** Never used for a request: a leg without a connection fails before start(). */
const notConnectedSrf: SrfLike = {
  connect: () => undefined,
  disconnect: () => undefined,
  on: () => undefined,
  createUAC: () => Promise.reject(new Error('not connected to drachtio-server')),
};

function defaultSrf(): SrfLike {
  return new Srf() as unknown as SrfLike;
}
