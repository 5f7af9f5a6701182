// Nodes on a real PostgreSQL: heartbeats, lost nodes, and reaping exactly
// once while peers race for it; a reaper that fails reaps nothing.
import { describe, expect, it } from 'vitest';
import { PgNodeRegistry } from '../../src/store/pg/pg-node-registry.js';
import { postgresDatabase, usePostgresServer } from '../support/store-under-test.js';

const pgServer = usePostgresServer();
const { pools } = pgServer;

const node = (id: string) => ({
  id,
  sipAddress: `127.0.0.1:${5060 + Number(id.slice(-1))}`,
  internalUrl: `http://127.0.0.1:${9000 + Number(id.slice(-1))}`,
});

describe('PgNodeRegistry', () => {
  it('heartbeats keep a node; one without them for the grace period is lost', async () => {
    const { pool } = await postgresDatabase(pgServer.server, pools);
    const reg = new PgNodeRegistry(pool);
    await reg.join(node('node-1'), 1000, 'a');
    await reg.join(node('node-2'), 1000, 'a');
    expect(await reg.heartbeat('node-1', 9000)).toBe(true);
    expect((await reg.lost(10_000, 5000)).map((n) => n.id)).toEqual(['node-2']);
    expect(await reg.get('node-1')).toMatchObject({ state: 'up', heartbeatAt: 9000 });
    await reg.drain('node-1');
    expect((await reg.get('node-1'))?.state).toBe('draining');
    await reg.leave('node-1');
    expect(await reg.get('node-1')).toBeUndefined();
    expect(await reg.heartbeat('node-1', 11_000)).toBe(false);
  });

  it('three peers reaping the same lost node at once: exactly one runs its reaper', async () => {
    const { url, pool } = await postgresDatabase(pgServer.server, pools);
    await new PgNodeRegistry(pool).join(node('node-9'), 1000, 'a');
    await pool.query(`INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`);
    await pool.query(
      `INSERT INTO calls (id, call_id, company_id, phone_number, status, created_at, modified_at, data, node_id)
       VALUES ('r1', 'c1', 'co', '+12125550100', 'in_call', 'x', 'x', '{}', 'node-9')`,
    );
    const peers = [1, 2, 3].map(() => new PgNodeRegistry(pools.open(url, 2)));
    let reaped = 0;
    const results = await Promise.all(
      peers.map((p) =>
        p.reap('node-9', 60_000, 5000, async (tx) => {
          reaped++;
          await tx.query(
            `UPDATE calls SET status = 'failed_during_call' WHERE node_id = 'node-9' AND status = 'in_call'`,
          );
        }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(reaped).toBe(1);
    const { rows } = await pool.query(`SELECT status FROM calls WHERE id = 'r1'`);
    expect(rows[0].status).toBe('failed_during_call');
    expect(await new PgNodeRegistry(pool).get('node-9')).toBeUndefined();
  });

  it('a node whose heartbeat came back is not reaped; a failing reaper leaves the node and its calls', async () => {
    const { pool } = await postgresDatabase(pgServer.server, pools);
    const reg = new PgNodeRegistry(pool);
    await reg.join(node('node-3'), 1000, 'a');
    await reg.heartbeat('node-3', 58_000);
    expect(await reg.reap('node-3', 60_000, 5000, async () => undefined)).toBe(false);
    await expect(
      reg.reap('node-3', 120_000, 5000, async () => {
        throw new Error('reaper failed');
      }),
    ).rejects.toThrow('reaper failed');
    expect(await reg.get('node-3')).toBeDefined();
  });
});
