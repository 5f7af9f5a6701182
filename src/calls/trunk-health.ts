// Keeps the SIP engine's OPTIONS monitor pointed at every active trunk (the
// set changes at runtime through the API) and answers "is it offline?" for
// trunk resolution and dialing.
import type { CallStore } from './ports/call-store.js';
import type { Timers } from './timers.js';
import type { TrunkHealth } from './trunk-resolution.js';

export interface TrunkMonitorPort {
  setTrunks(
    targets: Array<{ id: string; host: string; port?: number; transport: 'udp' | 'tcp' }>,
  ): void;
  status(trunkId: string): 'unknown' | 'online' | 'offline';
  stop(): void;
}

export class TrunkHealthTracker implements TrunkHealth {
  private handle: unknown;

  constructor(
    private readonly store: CallStore,
    private readonly monitor: TrunkMonitorPort,
    private readonly timers: Timers,
    private readonly refreshMs: number,
  ) {}

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
  }

  isOffline(trunkId: string): boolean {
    return this.monitor.status(trunkId) === 'offline';
  }

  stop(): void {
    if (this.handle) this.timers.clearInterval(this.handle);
    this.monitor.stop();
  }
}
