// The durable scheduler (DESIGN "Reliability rules"): polls the schedules
// table, claims due rows under a lease (one SQLite statement, so daemons
// sharing the file never claim the same row), marks the row `dispatched`
// BEFORE calling `dial`, and never hands a dispatched row out again. The
// protections are not judged here: the call session passes every number it
// dials through the dial gate, at dial time. Recovery after a crash:
// - a `claimed` row whose lease expired before `dispatched` is claimed again;
// - a `dispatched` row left behind (older than the lease) whose record is
//   still `scheduled`/`to_be_processed` was never dialed — the dialer writes
//   `trying` before it sends the INVITE — so it is re-armed; otherwise it
//   is closed as done.
// Time comes only from the injected Clock and timer functions.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../../clock.js';
import type { ScheduleKind, ScheduleRow } from '../../model/schedule.js';
import type { CallRepository, ScheduleRepository } from '../ports/call-store.js';
import { PRE_DIAL_STATUSES } from '../../model/call-status.js';

export interface DialAttempt {
  scheduleId: number;
  kind: ScheduleKind;
  /** 1-based dial attempt of the record. */
  attempt: number;
  /** `<recordId>:<attempt>`: store it on the attempt; never dial one key twice. */
  idempotencyKey: string;
  /** ISO instant the row was due. */
  dueAt: string;
  /** True when dialed more than `lateAfterMs` after it was due. */
  late: boolean;
}

/**
 * Starts the dial of a record. It must move the record from
 * `scheduled`/`to_be_processed` to `trying` (update with `onlyFrom`) BEFORE
 * sending the INVITE, and give up when that update finds another status.
 * It should resolve once the dial has started; a rejection is logged.
 */
export type DialFn = (recordId: string, attempt: DialAttempt) => Promise<void>;

export interface TimerFns {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SchedulerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SchedulerDeps {
  schedules: ScheduleRepository;
  calls: Pick<CallRepository, 'getById'>;
  clock: Clock;
  dial: DialFn;
  timers?: TimerFns;
  log?: SchedulerLog;
}

export interface SchedulerOptions {
  /** Lease owner id; unique per daemon. */
  owner?: string;
  pollIntervalMs?: number;
  leaseMs?: number;
  batchSize?: number;
  lateAfterMs?: number;
}

const quiet: SchedulerLog = { info: () => {}, warn: () => {}, error: () => {} };

export class Scheduler {
  readonly owner: string;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly lateAfterMs: number;
  private readonly timers: TimerFns;
  private readonly log: SchedulerLog;
  private timer: unknown;
  private running = false;
  private current: Promise<number> | undefined;

  constructor(
    private readonly deps: SchedulerDeps,
    opts: SchedulerOptions = {},
  ) {
    this.owner = opts.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.pollIntervalMs = opts.pollIntervalMs ?? 1000;
    this.leaseMs = opts.leaseMs ?? 60_000;
    this.batchSize = opts.batchSize ?? 20;
    this.lateAfterMs = opts.lateAfterMs ?? 60_000;
    this.timers = deps.timers ?? {
      setTimeout: (fn, ms) => setTimeout(fn, ms),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    };
    this.log = deps.log ?? quiet;
  }

  /** Starts polling (the first poll runs at once). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.arm(0);
  }

  /** Stops polling; resolves when a poll in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    await this.current?.catch(() => 0);
  }

  /**
   * Polls now (e.g. right after scheduling a call that is already due). With
   * `dueAt` (Unix ms), only when it falls before the next regular poll: a
   * call due tomorrow waits for the poll that finds it (on PostgreSQL a
   * poll costs the main thread its round trips).
   */
  poke(dueAt?: number): void {
    if (dueAt !== undefined && dueAt > this.deps.clock.now() + this.pollIntervalMs) return;
    if (this.running && !this.current) this.arm(0);
  }

  /** One poll: recovery, claim, dial. Returns how many rows were dialed. */
  tick(): Promise<number> {
    if (this.current) return this.current;
    this.current = this.poll().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  private arm(ms: number): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.tick()
        .catch((err: unknown) => this.log.error({ err }, 'scheduler poll failed'))
        .finally(() => {
          if (this.running) this.arm(this.pollIntervalMs);
        });
    }, ms);
  }

  private async poll(): Promise<number> {
    const now = this.deps.clock.now();
    const iso = new Date(now).toISOString();
    this.recoverDispatched(now);
    const rows = this.deps.schedules.claimDue(this.owner, now, this.leaseMs, this.batchSize, iso);
    const results = await Promise.allSettled(rows.map((row) => this.handle(row)));
    let dialed = 0;
    for (const r of results) {
      if (r.status === 'fulfilled' && r.value) dialed++;
      if (r.status === 'rejected') this.log.error({ err: r.reason }, 'scheduled dial failed');
    }
    return dialed;
  }

  /** Rows left `dispatched` by a daemon that died before the dial started. */
  private recoverDispatched(now: number): void {
    const { schedules, calls } = this.deps;
    const iso = new Date(now).toISOString();
    for (const row of schedules.staleDispatched(new Date(now - this.leaseMs).toISOString())) {
      const record = calls.getById(row.callRecordId);
      if (record && PRE_DIAL_STATUSES.includes(record.status)) {
        schedules.rearm(row.id, now, 'rearmed: dispatched but never dialed', iso);
        this.log.warn({ scheduleId: row.id, recordId: row.callRecordId }, 'schedule re-armed');
      } else {
        schedules.finish(row.id, 'done', `recovered: record ${record?.status ?? 'missing'}`, iso);
      }
    }
  }

  /** True when `dial` was called for the row. */
  private async handle(row: ScheduleRow): Promise<boolean> {
    const { schedules, calls, clock } = this.deps;
    const record = calls.getById(row.callRecordId);
    const iso = () => new Date(clock.now()).toISOString();
    if (!record) {
      schedules.finish(row.id, 'cancelled', 'record missing', iso());
      return false;
    }
    if (!PRE_DIAL_STATUSES.includes(record.status)) {
      // Hung up while scheduled, or already dialed: nothing to do.
      schedules.finish(row.id, 'done', `record already ${record.status}`, iso());
      return false;
    }
    const now = clock.now();
    if (!schedules.markDispatched(row.id, this.owner, now, iso())) {
      this.log.warn({ scheduleId: row.id }, 'schedule lease lost before dispatch');
      return false;
    }
    try {
      await this.deps.dial(record.id, {
        scheduleId: row.id,
        kind: row.kind,
        attempt: row.attempt,
        idempotencyKey: row.idempotencyKey,
        dueAt: new Date(row.dueAt).toISOString(),
        late: now - row.dueAt > this.lateAfterMs,
      });
      schedules.finish(row.id, 'done', 'dialed', iso());
    } catch (err) {
      schedules.finish(row.id, 'done', `dial failed: ${String(err)}`.slice(0, 200), iso());
      this.log.error({ err, scheduleId: row.id, recordId: record.id }, 'dial failed');
    }
    return true;
  }
}
