// The node's heartbeat and reaping as a state machine, on a manual clock and
// an in-memory registry (the registry's SQL is tested on a real server in
// sip-test/store/pg-node-registry.test.ts).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { CallRecord } from '../model/call-record.js';
import type { NodeInfo, NodeRow } from '../store/pg/pg-node-registry.js';
import { ClusterNode, type NodeRegistry } from './cluster-node.js';

class MemoryRegistry implements NodeRegistry {
  readonly rows = new Map<string, NodeRow>();
  readonly owner = new Map<string, string>();
  down = false;
  joins = 0;

  join(node: NodeInfo, now: number, at: string): void {
    this.check();
    this.joins++;
    this.rows.set(node.id, { ...node, state: 'up', startedAt: at, heartbeatAt: now });
  }
  heartbeat(id: string, now: number): boolean {
    this.check();
    const row = this.rows.get(id);
    if (row) row.heartbeatAt = now;
    return row !== undefined;
  }
  drain(): void {}
  leave(id: string): void {
    this.rows.delete(id);
  }
  get(id: string): NodeRow | undefined {
    return this.rows.get(id);
  }
  lost(now: number, graceMs: number): NodeRow[] {
    this.check();
    return [...this.rows.values()].filter((r) => r.heartbeatAt < now - graceMs);
  }
  adopt(lostId: string, byId: string, now: number, graceMs: number): string[] | undefined {
    const row = this.rows.get(lostId);
    if (!row || row.heartbeatAt >= now - graceMs) return undefined;
    this.rows.delete(lostId);
    const ids = [...this.owner].filter(([, n]) => n === lostId).map(([id]) => id);
    for (const id of ids) this.owner.set(id, byId);
    return ids;
  }
  ownerOf(): NodeRow | undefined {
    return undefined;
  }
  private check(): void {
    if (this.down) throw new Error('database down');
  }
}

const GRACE = 3_000;
const info = (id: string): NodeInfo => ({ id, sipAddress: 'h:5060', internalUrl: 'http://h:1' });

function rig() {
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 12));
  const nodes = new MemoryRegistry();
  const adopted: Array<{ ids: string[]; lost: string }> = [];
  const node = new ClusterNode(
    info('me'),
    {
      nodes,
      calls: { getById: (id) => ({ id }) as CallRecord },
      adopt: (records, lost) => adopted.push({ ids: records.map((r) => r.id), lost }),
      clock,
      timers: {
        setTimeout: () => 0,
        clearTimeout: () => undefined,
        setInterval: () => 0,
        clearInterval: () => undefined,
      },
      log: pino({ level: 'silent' }),
    },
    { heartbeatMs: 500, lostAfterMs: GRACE },
  );
  const peerBeats = (id: string) => nodes.heartbeat(id, clock.now());
  return { clock, nodes, adopted, node, peerBeats };
}

describe('ClusterNode', () => {
  it('adopts a peer whose heartbeat stopped, once, after a whole grace period in touch', () => {
    const { clock, nodes, adopted, node } = rig();
    nodes.join(info('peer'), clock.now() - 10_000, 'x');
    nodes.owner.set('r1', 'peer');
    nodes.owner.set('r2', 'peer');
    node.start();
    clock.advance(1_000);
    node.beat(); // the peer is stale, but this node has been here 1 s only
    expect(adopted).toEqual([]);
    clock.advance(2_000);
    node.beat();
    expect(adopted).toEqual([{ ids: ['r1', 'r2'], lost: 'peer' }]);
    clock.advance(500);
    node.beat();
    expect(adopted).toHaveLength(1);
    expect(nodes.owner.get('r1')).toBe('me');
  });

  it('a live peer is left alone', () => {
    const { clock, nodes, adopted, node, peerBeats } = rig();
    nodes.join(info('peer'), clock.now(), 'x');
    node.start();
    for (let i = 0; i < 20; i++) {
      clock.advance(500);
      peerBeats('peer');
      node.beat();
    }
    expect(adopted).toEqual([]);
  });

  it('after a database outage that stopped every heartbeat, the first node back does not reap peers that beat again', () => {
    const { clock, nodes, adopted, node, peerBeats } = rig();
    nodes.join(info('peer'), clock.now(), 'x');
    node.start();
    clock.advance(500);
    node.beat();
    nodes.down = true;
    for (let i = 0; i < 40; i++) {
      clock.advance(500);
      node.beat(); // fails
    }
    nodes.down = false;
    clock.advance(100);
    node.beat(); // back first: the peer's heartbeat is 20 s old
    expect(adopted).toEqual([]);
    for (let i = 0; i < 10; i++) {
      clock.advance(500);
      peerBeats('peer');
      node.beat();
    }
    expect(adopted).toEqual([]);
    // ...but a peer that stays silent is reaped once this node has been back a grace period
    for (let i = 0; i < 10; i++) {
      clock.advance(500);
      node.beat();
    }
    expect(adopted.map((a) => a.lost)).toEqual(['peer']);
  });

  it('reaped by a peer (its row gone): joins again', () => {
    const { clock, nodes, node } = rig();
    node.start();
    expect(nodes.joins).toBe(1);
    nodes.rows.delete('me');
    clock.advance(500);
    node.beat();
    expect(nodes.joins).toBe(2);
    expect(nodes.get('me')?.heartbeatAt).toBe(clock.now());
  });
});
