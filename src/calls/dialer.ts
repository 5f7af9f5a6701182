// Runs accepted calls: one CallSession each, live ones tracked by record id
// so the hangup API and shutdown can reach them; a watchdog ends any call
// left in a non-final status past its limits (call_stuck).
import type { CallRecord } from '../store/call-repository.js';
import type { Store } from '../store/store.js';
import type { CallDispatcher } from './call-service.js';
import { CallSession, type CallSessionDeps } from './call-session.js';
import { LIVE_STATUSES, type CallStatus } from './call-status.js';

export interface DialerSettings {
  defaultRingTimeoutSeconds: number;
  defaultMaxDurationSeconds: number;
  /** Slack past ring timeout + max duration before the watchdog steps in. */
  stuckAfterSeconds: number;
  watchdogIntervalMs?: number;
}

export class Dialer implements CallDispatcher {
  private readonly sessions = new Map<string, CallSession>();
  private readonly running = new Set<Promise<unknown>>();
  private watchdog: unknown;
  private draining = false;

  constructor(
    private readonly deps: Omit<CallSessionDeps, 'settings'> & { settings: DialerSettings },
    /** Called with each finished record (retries, metrics). */
    private readonly onFinished?: (record: CallRecord) => void,
  ) {}

  get liveCalls(): number {
    return this.sessions.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** The scheduler's dial: a due call or retry (see Scheduler's DialFn). */
  async dial(recordId: string, attempt: { idempotencyKey: string }): Promise<void> {
    const record = this.deps.store.calls.getById(recordId);
    if (record) this.accepted(record, attempt.idempotencyKey);
  }

  accepted(record: CallRecord, idempotencyKey?: string): void {
    if (this.draining || this.sessions.has(record.id)) return;
    const session = new CallSession(record, this.deps, idempotencyKey);
    this.sessions.set(record.id, session);
    const run = session
      .run()
      .then((finished) => this.onFinished?.(finished))
      .catch((err: unknown) =>
        this.deps.log.error({ err, callId: record.callId }, 'call session crashed'),
      )
      .finally(() => {
        this.sessions.delete(record.id);
        this.running.delete(run);
      });
    this.running.add(run);
  }

  async hangup(record: CallRecord): Promise<boolean> {
    const session = this.sessions.get(record.id);
    if (!session) return false;
    session.stop('api');
    return true;
  }

  /**
   * After a restart: calls that were live in the previous process cannot be
   * any more (their dialog died with it) and are finished as call_stuck;
   * accepted calls that were never dialed are dialed now.
   */
  recover(): void {
    const { store } = this.deps;
    const at = new Date(this.deps.clock.now()).toISOString();
    for (const rec of store.calls.findByStatus(LIVE_STATUSES)) {
      finishStuck(store, rec, at);
    }
    for (const rec of store.calls.findByStatus(['to_be_processed'])) this.accepted(rec);
  }

  startWatchdog(): void {
    const every = this.deps.settings.watchdogIntervalMs ?? 30_000;
    this.watchdog = this.deps.timers.setInterval(() => this.checkStuck(), every);
  }

  /** Ends live sessions past their limits, and finishes orphaned records. */
  checkStuck(): void {
    const { settings, clock, store } = this.deps;
    const now = clock.now();
    const limitMs =
      1000 *
      (settings.defaultRingTimeoutSeconds +
        settings.defaultMaxDurationSeconds +
        settings.stuckAfterSeconds);
    for (const session of this.sessions.values()) {
      if (now - session.startedMs > limitMs) session.stop('watchdog');
    }
    const at = new Date(now).toISOString();
    for (const rec of store.calls.findByStatus([...LIVE_STATUSES, 'to_be_processed'])) {
      if (this.sessions.has(rec.id)) continue;
      if (now - Date.parse(rec.modifiedAt) > 1000 * settings.stuckAfterSeconds)
        finishStuck(store, rec, at);
    }
  }

  /** SIGTERM: take no new calls, end live ones (CANCEL or BYE), wait for their records. */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.watchdog) this.deps.timers.clearInterval(this.watchdog);
    for (const session of this.sessions.values()) session.stop('shutdown');
    let timer: unknown;
    const timeout = new Promise<void>(
      (resolve) => (timer = this.deps.timers.setTimeout(resolve, timeoutMs)),
    );
    await Promise.race([Promise.all([...this.running]), timeout]);
    this.deps.timers.clearTimeout(timer);
  }
}

function finishStuck(store: Store, rec: CallRecord, at: string): void {
  const answered = typeof rec.startAt === 'string';
  const status: CallStatus = answered ? 'failed_during_call' : 'failed';
  store.calls.update(
    rec.id,
    { status, endCallReason: 'call_stuck', endAt: at, active: false },
    at,
    {
      onlyFrom: [rec.status],
      detail: 'watchdog',
    },
  );
}
