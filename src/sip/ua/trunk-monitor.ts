// OPTIONS pings to each trunk (RFC 3261 §11): any final response means the
// trunk is up; a DNS or transport failure marks it offline at once, timeouts
// (Timer F, §17.1.2.2) after `failuresBeforeOffline` pings in a row.

import { generateBranch, generateCallId, generateTag } from '../message/index.js';
import type { SipRequest } from '../message/types.js';
import { isLocalRefusal } from '../transaction/refused-client-transaction.js';
import type { TransactionLayer } from '../transaction/transaction-layer.js';
import type { Clock, TimerHandle } from '../transport/clock.js';
import type { Endpoint, TransportProtocol } from '../transport/types.js';
import { TypedEmitter } from './typed-emitter.js';

export interface TrunkTarget {
  id: string;
  host: string;
  port?: number;
  transport: TransportProtocol;
}

export interface TrunkMonitorOptions {
  trunks: TrunkTarget[];
  /** Time between pings of one trunk. */
  intervalMs: number;
  /** Pings in a row without an answer before the trunk is offline (default 1). */
  failuresBeforeOffline?: number;
}

export type TrunkStatus = 'unknown' | 'online' | 'offline';

/** What the monitor last learnt about one trunk. */
export interface TrunkHealthSnapshot {
  status: TrunkStatus;
  /** When the last ping ended (answer, timeout or failure); null before the first. */
  checkedAt: number | null;
  /** Why the last ping failed; null after an answer. Never credentials. */
  lastError: string | null;
}

export interface TrunkMonitorEvents {
  online: { trunkId: string; status: number };
  offline: { trunkId: string; cause: 'timeout' | 'transport' | 'dns'; lastError: string };
}

export interface TrunkMonitorDeps {
  tx: TransactionLayer;
  clock: Clock;
  resolve(target: TrunkTarget): Promise<Endpoint[]>;
  sentBy(t: TransportProtocol): string;
  userAgent: string;
  /** How long a ping waits for an answer (RFC 3261 Timer F). */
  timerFMs: number;
  onStop(self: TrunkMonitor): void;
}

interface TrunkState {
  target: TrunkTarget;
  status: TrunkStatus;
  checkedAt: number | null;
  lastError: string | null;
  /** Unanswered pings in a row. */
  timeouts: number;
  inFlight: boolean;
  timer: TimerHandle | undefined;
}

export class TrunkMonitor extends TypedEmitter<TrunkMonitorEvents> {
  private readonly trunks = new Map<string, TrunkState>();
  private stopped = false;
  private started = false;

  constructor(
    private readonly opts: TrunkMonitorOptions,
    private readonly deps: TrunkMonitorDeps,
  ) {
    super();
    for (const target of opts.trunks) this.add(target);
  }

  /** @internal started by the stack */
  start(): void {
    this.started = true;
    for (const t of this.trunks.values()) void this.ping(t);
  }

  /** Replaces the monitored set: new trunks are pinged now, removed ones
   *  forgotten, changed addresses start again from 'unknown'. */
  setTrunks(targets: TrunkTarget[]): void {
    const wanted = new Map(targets.map((t) => [t.id, t]));
    for (const [id, state] of this.trunks) {
      const next = wanted.get(id);
      const same =
        next &&
        next.host === state.target.host &&
        next.port === state.target.port &&
        next.transport === state.target.transport;
      if (same) continue;
      if (state.timer !== undefined) this.deps.clock.clearTimer(state.timer);
      this.trunks.delete(id);
    }
    for (const target of targets) {
      if (this.trunks.has(target.id)) continue;
      const state = this.add(target);
      if (this.started && !this.stopped) void this.ping(state);
    }
  }

  private add(target: TrunkTarget): TrunkState {
    const state: TrunkState = {
      target,
      status: 'unknown',
      checkedAt: null,
      lastError: null,
      timeouts: 0,
      inFlight: false,
      timer: undefined,
    };
    this.trunks.set(target.id, state);
    return state;
  }

  status(trunkId: string): TrunkStatus {
    return this.trunks.get(trunkId)?.status ?? 'unknown';
  }

  /** Unknown (never checked) for a trunk that is not monitored. */
  health(trunkId: string): TrunkHealthSnapshot {
    const t = this.trunks.get(trunkId);
    if (!t) return { status: 'unknown', checkedAt: null, lastError: null };
    return { status: t.status, checkedAt: t.checkedAt, lastError: t.lastError };
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const t of this.trunks.values()) {
      if (t.timer !== undefined) this.deps.clock.clearTimer(t.timer);
      t.timer = undefined;
    }
    this.deps.onStop(this);
  }

  private schedule(t: TrunkState): void {
    // A trunk removed by setTrunks() while its ping was in flight stops here.
    if (this.stopped || this.trunks.get(t.target.id) !== t) return;
    t.timer = this.deps.clock.setTimer(() => void this.ping(t), this.opts.intervalMs);
  }

  private async ping(t: TrunkState): Promise<void> {
    t.timer = undefined;
    if (this.stopped || t.inFlight) return;
    t.inFlight = true;
    let dest: Endpoint | undefined;
    try {
      dest = (await this.deps.resolve(t.target))[0];
    } catch {
      dest = undefined;
    }
    if (this.stopped) return;
    if (!dest) {
      t.inFlight = false;
      this.fail(t, 'dns', `the host ${t.target.host} did not resolve`);
      this.schedule(t);
      return;
    }
    const branch = generateBranch();
    const req = this.buildOptions(dest, branch);
    const done = (): void => {
      t.inFlight = false;
      this.schedule(t);
    };
    this.deps.tx.sendRequest(req, branch, dest, {
      onResponse: (res) => {
        if (res.status < 200) return;
        // Our own budget was spent and nothing left: says nothing about the trunk.
        if (isLocalRefusal(res)) return done();
        t.checkedAt = this.deps.clock.now();
        t.lastError = null;
        t.timeouts = 0;
        this.set(t, 'online', { trunkId: t.target.id, status: res.status });
        done();
      },
      onTimeout: () => {
        const seconds = Math.round(this.deps.timerFMs / 100) / 10;
        this.fail(t, 'timeout', `no answer to OPTIONS within ${seconds} s (Timer F)`);
        done();
      },
      onTransportError: (err) => {
        const code = (err as NodeJS.ErrnoException).code;
        this.fail(t, 'transport', `transport error${code ? ` ${code}` : ''}: ${err.message}`);
        done();
      },
    });
  }

  /** DNS and transport failures are final; timeouts count up to the threshold. */
  private fail(t: TrunkState, cause: TrunkMonitorEvents['offline']['cause'], error: string): void {
    if (this.stopped) return;
    t.checkedAt = this.deps.clock.now();
    t.lastError = error;
    t.timeouts = cause === 'timeout' ? t.timeouts + 1 : 0;
    const threshold = this.opts.failuresBeforeOffline ?? 1;
    if (cause === 'timeout' && t.timeouts < threshold) return;
    this.set(t, 'offline', { trunkId: t.target.id, cause, lastError: error });
  }

  private set(t: TrunkState, status: 'online', e: TrunkMonitorEvents['online']): void;
  private set(t: TrunkState, status: 'offline', e: TrunkMonitorEvents['offline']): void;
  private set(
    t: TrunkState,
    status: 'online' | 'offline',
    e: TrunkMonitorEvents['online'] | TrunkMonitorEvents['offline'],
  ): void {
    if (this.stopped || t.status === status) return;
    t.status = status;
    if (status === 'online') this.emit('online', e as TrunkMonitorEvents['online']);
    else this.emit('offline', e as TrunkMonitorEvents['offline']);
  }

  /**
   * Each ping is a new request outside any dialog: a fresh Call-ID (RFC 3261
   * §8.1.1.4) and From tag (§8.1.1.3), CSeq 1 (§8.1.1.5). A Call-ID reused
   * across pings reads to a strict peer (SIPp, some carriers) as one dead
   * call repeated.
   */
  private buildOptions(dest: Endpoint, branch: string): SipRequest {
    const sentBy = this.deps.sentBy(dest.transport);
    const host = dest.host.includes(':') ? `[${dest.host}]` : dest.host;
    const uri = `sip:${host}:${dest.port}${dest.transport === 'udp' ? '' : `;transport=${dest.transport}`}`;
    return {
      kind: 'request',
      method: 'OPTIONS',
      uri,
      version: 'SIP/2.0',
      headers: [
        {
          name: 'via',
          value: `SIP/2.0/${dest.transport.toUpperCase()} ${sentBy};rport;branch=${branch}`,
        },
        { name: 'max-forwards', value: '70' },
        { name: 'from', value: `<sip:gw@${sentBy}>;tag=${generateTag()}` },
        { name: 'to', value: `<${uri}>` },
        { name: 'call-id', value: generateCallId() },
        { name: 'cseq', value: '1 OPTIONS' },
        { name: 'user-agent', value: this.deps.userAgent },
        { name: 'accept', value: 'application/sdp' },
      ],
      body: Buffer.alloc(0),
    };
  }
}
