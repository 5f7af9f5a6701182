// The daemons sharing one PostgreSQL database (issue 27 item 4;
// docs/decisions/multi-node-store.md rule 4): each keeps a row with its
// addresses and a heartbeat; a node whose heartbeat is older than the grace
// period is lost, and exactly one live peer reaps it (its calls' records
// are finished in the reaper's transaction, then its row goes).
import type pg from 'pg';
import { LIVE_STATUSES } from '../../model/call-status.js';
import type { Queryable } from './pg-schedule-repository.js';
import { PgUnitOfWork } from './pg-unit-of-work.js';

export interface NodeInfo {
  id: string;
  /** host:port of its SIP stack (calls stay on the node that placed them). */
  sipAddress: string;
  /** Where peers forward a hangup or transfer of its calls. */
  internalUrl: string;
}

export interface NodeRow extends NodeInfo {
  state: 'up' | 'draining';
  startedAt: string;
  /** Unix ms of the last heartbeat. */
  heartbeatAt: number;
}

interface Row {
  id: string;
  sip_address: string;
  internal_url: string;
  state: 'up' | 'draining';
  started_at: string;
  heartbeat_at: string;
}

const toNode = (r: Row): NodeRow => ({
  id: r.id,
  sipAddress: r.sip_address,
  internalUrl: r.internal_url,
  state: r.state,
  startedAt: r.started_at,
  heartbeatAt: Number(r.heartbeat_at),
});

const nodeKey = (id: string) => `node:${id}`;

export class PgNodeRegistry {
  private readonly uow: PgUnitOfWork;
  private beating: NodeJS.Timeout | undefined;

  constructor(private readonly pool: pg.Pool) {
    this.uow = new PgUnitOfWork(pool);
  }

  /** Registers (or re-registers after a restart) a node as up. */
  async join(node: NodeInfo, now: number, at: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO nodes (id, sip_address, internal_url, state, started_at, heartbeat_at)
       VALUES ($1, $2, $3, 'up', $4, $5)
       ON CONFLICT (id) DO UPDATE SET sip_address = $2, internal_url = $3, state = 'up',
         started_at = $4, heartbeat_at = $5`,
      [node.id, node.sipAddress, node.internalUrl, at, now],
    );
  }

  /** False when the row is gone: a peer reaped this node, which must stop taking work. */
  async heartbeat(id: string, now: number): Promise<boolean> {
    const r = await this.pool.query('UPDATE nodes SET heartbeat_at = $2 WHERE id = $1', [id, now]);
    return r.rowCount === 1;
  }

  async drain(id: string): Promise<void> {
    await this.pool.query(`UPDATE nodes SET state = 'draining' WHERE id = $1`, [id]);
  }

  /**
   * Beats for `id` every `everyMs` from the thread that holds this registry
   * (the store worker), beside the node's own beats: a main thread busy for
   * seconds with a burst of requests is slow, not lost, and must not be
   * taken for lost while its calls go on. A failed beat is left to the
   * next one; wall-clock time, as every heartbeat compared across nodes.
   */
  keepBeating(id: string, everyMs: number): void {
    this.stopBeating();
    this.beating = setInterval(() => {
      this.heartbeat(id, Date.now()).catch(() => undefined);
    }, everyMs);
  }

  stopBeating(): void {
    if (this.beating) clearInterval(this.beating);
    this.beating = undefined;
  }

  /** A node that stopped cleanly leaves nothing to reap. */
  async leave(id: string): Promise<void> {
    await this.pool.query('DELETE FROM nodes WHERE id = $1', [id]);
  }

  async get(id: string): Promise<NodeRow | undefined> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM nodes WHERE id = $1', [id]);
    return rows[0] && toNode(rows[0]);
  }

  /** Nodes whose heartbeat is older than `graceMs`, oldest first. */
  async lost(now: number, graceMs: number): Promise<NodeRow[]> {
    const { rows } = await this.pool.query<Row>(
      'SELECT * FROM nodes WHERE heartbeat_at < $1 ORDER BY heartbeat_at, id',
      [now - graceMs],
    );
    return rows.map(toNode);
  }

  /**
   * Reaps a lost node once across all daemons: under the node's lock, checks
   * it is still lost, runs `reap` in the same transaction (finishing the
   * node's records), and deletes its row. False when another peer reaped it
   * first or its heartbeat came back.
   */
  async reap(
    id: string,
    now: number,
    graceMs: number,
    reap: (tx: Queryable) => Promise<void>,
  ): Promise<boolean> {
    return this.uow.run([nodeKey(id)], async (tx) => {
      const r = await tx.query('SELECT 1 FROM nodes WHERE id = $1 AND heartbeat_at < $2', [
        id,
        now - graceMs,
      ]);
      if (r.rowCount !== 1) return false;
      await reap(tx);
      await tx.query('DELETE FROM nodes WHERE id = $1', [id]);
      return true;
    });
  }

  /**
   * Takes over a lost node's unfinished records (rule 4), once across all
   * daemons: its live and accepted records become `byId`'s, which then
   * finishes or dials them as after its own restart (dial-path.md). The ids
   * taken, or undefined when another peer reaped the node first or its
   * heartbeat came back.
   */
  async adopt(
    lostId: string,
    byId: string,
    now: number,
    graceMs: number,
  ): Promise<string[] | undefined> {
    let ids: string[] = [];
    const reaped = await this.reap(lostId, now, graceMs, async (tx) => {
      const { rows } = await tx.query<{ id: string }>(
        `UPDATE calls SET node_id = $2 WHERE node_id = $1 AND status = ANY($3::text[])
         RETURNING id`,
        [lostId, byId, [...LIVE_STATUSES, 'to_be_processed']],
      );
      ids = rows.map((r) => r.id);
    });
    return reaped ? ids : undefined;
  }

  /** The node holding a record's call (rule 5), while that node is registered. */
  async ownerOf(recordId: string): Promise<NodeRow | undefined> {
    const { rows } = await this.pool.query<Row>(
      'SELECT n.* FROM calls c JOIN nodes n ON n.id = c.node_id WHERE c.id = $1',
      [recordId],
    );
    return rows[0] && toNode(rows[0]);
  }
}
