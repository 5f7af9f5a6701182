// This daemon as one node of several on one PostgreSQL database (issue 27;
// docs/decisions/multi-node-store.md rule 4). It keeps its heartbeat row
// fresh and, on each beat, looks for peers whose heartbeat stopped: one
// live node adopts a lost peer's unfinished records (once, under the lost
// node's lock) and finishes or dials them as after its own restart.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Timers } from '../calls/timers.js';
import type { CallRecord } from '../model/call-record.js';
import type { NodeInfo, NodeRow } from '../store/pg/pg-node-registry.js';

/** The node registry as the PostgreSQL store answers it (synchronously). */
export interface NodeRegistry {
  join(node: NodeInfo, now: number, at: string): void;
  heartbeat(id: string, now: number): boolean;
  drain(id: string): void;
  leave(id: string): void;
  get(id: string): NodeRow | undefined;
  lost(now: number, graceMs: number): NodeRow[];
  adopt(lostId: string, byId: string, now: number, graceMs: number): string[] | undefined;
  ownerOf(recordId: string): NodeRow | undefined;
  /** Beats from the store's own thread too, whatever the main thread's load (PostgreSQL store). */
  keepBeating?(id: string, everyMs: number): void;
  stopBeating?(): void;
}

export interface ClusterNodeDeps {
  nodes: NodeRegistry;
  calls: { getById(id: string): CallRecord | undefined };
  /** Finishes or dials a lost peer's records (Dialer.adopt). */
  adopt(records: CallRecord[], lostNodeId: string): void;
  clock: Clock;
  timers: Timers;
  log: Logger;
}

export interface ClusterNodeOptions {
  heartbeatMs: number;
  /** A heartbeat older than this: the node is lost. */
  lostAfterMs: number;
}

export class ClusterNode {
  private interval: unknown;
  private joined = false;
  /** Since when every heartbeat reached the database (undefined after a failed one). */
  private inTouchSince: number | undefined;

  constructor(
    readonly info: NodeInfo,
    private readonly deps: ClusterNodeDeps,
    private readonly opts: ClusterNodeOptions,
  ) {}

  /** Joins (a restart re-joins under the same id) and starts beating. */
  start(): void {
    this.join();
    this.deps.nodes.keepBeating?.(this.info.id, this.opts.heartbeatMs);
    this.interval = this.deps.timers.setInterval(() => this.beat(), this.opts.heartbeatMs);
  }

  /**
   * One beat: the heartbeat, then the lost peers. Errors are logged; the
   * next beat tries again. Peers are judged only once this node has been in
   * touch with the database for a whole grace period: after an outage that
   * stopped every heartbeat, the first node back must not take its live
   * peers for lost before they had the chance to beat again.
   */
  beat(): void {
    const now = this.deps.clock.now();
    try {
      const known = this.deps.nodes.heartbeat(this.info.id, now);
      this.inTouchSince ??= now;
      if (!known) {
        // A peer took this node for lost and adopted its records (a stall or
        // a partition longer than the grace) and finished them; join again
        // for new work.
        this.deps.log.error(
          { nodeId: this.info.id },
          'this node was reaped by a peer: joining again',
        );
        this.join();
      }
      if (now - this.inTouchSince < this.opts.lostAfterMs) return;
      for (const peer of this.deps.nodes.lost(now, this.opts.lostAfterMs)) {
        if (peer.id !== this.info.id) this.reap(peer, now);
      }
    } catch (err) {
      this.inTouchSince = undefined;
      this.deps.log.error({ err }, 'cluster heartbeat failed');
    }
  }

  /** SIGTERM: peers see this node draining (it claims nothing new). */
  drain(): void {
    try {
      this.deps.nodes.drain(this.info.id);
    } catch (err) {
      this.deps.log.warn({ err }, 'node not marked draining');
    }
  }

  /** A clean stop leaves nothing for peers to reap. */
  stop(): void {
    if (this.interval !== undefined) this.deps.timers.clearInterval(this.interval);
    this.interval = undefined;
    if (!this.joined) return;
    try {
      this.deps.nodes.stopBeating?.();
      this.deps.nodes.leave(this.info.id);
    } catch (err) {
      this.deps.log.warn({ err }, 'node row not removed');
    }
  }

  private join(): void {
    const now = this.deps.clock.now();
    this.deps.nodes.join(this.info, now, new Date(now).toISOString());
    this.joined = true;
    this.inTouchSince ??= now;
  }

  private reap(peer: NodeRow, now: number): void {
    const ids = this.deps.nodes.adopt(peer.id, this.info.id, now, this.opts.lostAfterMs);
    if (ids === undefined) return; // another peer was first, or it came back
    const records = ids
      .map((id) => this.deps.calls.getById(id))
      .filter((r): r is CallRecord => r !== undefined);
    this.deps.log.warn(
      { lostNode: peer.id, records: records.length, silentMs: now - peer.heartbeatAt },
      'peer lost: its unfinished calls are adopted',
    );
    this.deps.adopt(records, peer.id);
  }
}
