// Keeps the SIP engine's OPTIONS monitor pointed at the active trunks that
// ask for pings (the set changes at runtime through the API), answers "is it
// offline, and why?" for trunk resolution, dialing and the API, and logs each
// change of state once.
import type { CallStore } from './ports/call-store.js';
import type { Timers } from './timers.js';
import type { TrunkHealth, TrunkHealthView } from './trunk-resolution.js';

type Status = TrunkHealthView['status'];

export interface TrunkMonitorPort {
  setTrunks(
    targets: Array<{ id: string; host: string; port?: number; transport: 'udp' | 'tcp' | 'tls' }>,
  ): void;
  status(trunkId: string): Status;
  health(trunkId: string): { status: Status; checkedAt: number | null; lastError: string | null };
  on(event: 'online', fn: (e: { trunkId: string; status: number }) => void): unknown;
  on(
    event: 'offline',
    fn: (e: { trunkId: string; cause: string; lastError: string }) => void,
  ): unknown;
  stop(): void;
}

export interface TrunkHealthLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export class TrunkHealthTracker implements TrunkHealth {
  private handle: unknown;
  /** Trunks handed to the monitor at the last refresh. */
  private pingedIds: string[] = [];

  constructor(
    private readonly store: CallStore,
    private readonly monitor: TrunkMonitorPort,
    private readonly timers: Timers,
    private readonly refreshMs: number,
    log?: TrunkHealthLog,
  ) {
    // Only transitions are logged: a trunk that stays down is one warning, not one per ping.
    monitor.on('offline', (e) =>
      log?.warn(
        { trunkId: e.trunkId, cause: e.cause, lastError: e.lastError },
        'SIP trunk offline',
      ),
    );
    monitor.on('online', (e) =>
      log?.info({ trunkId: e.trunkId, status: e.status }, 'SIP trunk online'),
    );
  }

  start(): void {
    this.refresh();
    this.handle = this.timers.setInterval(() => this.refresh(), this.refreshMs);
  }

  refresh(): void {
    const targets = this.store.sipTrunks
      .listAll()
      .filter((t) => t.active && t.optionsPing === true) // pings only where the operator asked
      .map((t) => ({
        id: t.id,
        host: t.host,
        ...(t.port ? { port: t.port } : {}),
        transport: t.transport,
      }));
    this.monitor.setTrunks(targets);
    this.pingedIds = targets.map((t) => t.id);
  }

  pinged(): Array<{ trunkId: string; status: Status }> {
    return this.pingedIds.map((trunkId) => ({ trunkId, status: this.monitor.status(trunkId) }));
  }

  isOffline(trunkId: string): boolean {
    return this.monitor.status(trunkId) === 'offline';
  }

  health(trunkId: string): TrunkHealthView {
    const h = this.monitor.health(trunkId);
    return {
      status: h.status,
      checkedAt: h.checkedAt === null ? null : new Date(h.checkedAt).toISOString(),
      lastError: h.lastError,
    };
  }

  stop(): void {
    if (this.handle) this.timers.clearInterval(this.handle);
    this.monitor.stop();
  }
}
