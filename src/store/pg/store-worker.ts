// The PostgreSQL store's worker thread (issue 27; docs/decisions/
// multi-node-store.md "How the daemon talks to PostgreSQL"). It owns the
// pool and the asynchronous repositories; the main thread asks for one
// repository call or transaction step at a time and waits for the answer
// (store-bridge.ts). One transaction at most is open: the main thread is
// blocked inside it, so every call that arrives meanwhile belongs to it.
import { workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { migratePg } from './pg-migrations.js';
import { PgNodeRegistry } from './pg-node-registry.js';
import { PreparedClient } from './prepared-client.js';
import { beginLocked, lockKeys } from './pg-unit-of-work.js';
import { makePgRepositories, type PgRepositories } from './pg-repositories.js';
import type { BridgeReply, BridgeRequest, StoreWorkerData } from './store-bridge-protocol.js';

const data = workerData as StoreWorkerData;
const port: MessagePort = data.port;
const signal = new Int32Array(data.signal);

// Timestamps (timestamptz/int8 as text) come back as the strings the repositories parse.
const pool = new pg.Pool({
  Client: PreparedClient,
  connectionString: data.url,
  max: data.poolMax,
  statement_timeout: data.statementTimeoutMs,
  application_name: `gateway ${data.nodeId}`,
});
// An idle client's error (the server restarted) is not the caller's: the pool drops it.
pool.on('error', () => undefined);

let webhookWritten = false;
const onWritten = () => (webhookWritten = true);
const outside = makePgRepositories(pool, data.nodeId, onWritten);
const nodes = new PgNodeRegistry(pool);
let tx: { client: pg.PoolClient; repos: PgRepositories } | undefined;

async function handle(req: BridgeRequest): Promise<unknown> {
  switch (req.op) {
    case 'migrate':
      return migratePg(pool);
    case 'call': {
      // The node registry keeps its own transactions (it is never part of the caller's).
      const repos = tx?.repos ?? outside;
      const repo = (req.repo === 'nodes' ? nodes : repos[req.repo]) as unknown as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      const fn = repo[req.method];
      if (typeof fn !== 'function') throw new Error(`no method ${req.repo}.${req.method}`);
      return fn.apply(repo, req.args.map(revive));
    }
    case 'begin': {
      if (tx) throw new Error('a transaction is already open');
      const client = await pool.connect();
      try {
        await beginLocked(client, req.keys); // rule 2
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw err;
      }
      tx = { client, repos: makePgRepositories(client, data.nodeId, onWritten) };
      return undefined;
    }
    case 'lock': {
      if (!tx) throw new Error('no transaction is open');
      await lockKeys(tx.client, req.keys);
      return undefined;
    }
    case 'savepoint':
    case 'release':
    case 'rollbackTo': {
      if (!tx) throw new Error('no transaction is open');
      const verb = {
        savepoint: 'SAVEPOINT',
        release: 'RELEASE SAVEPOINT',
        rollbackTo: 'ROLLBACK TO SAVEPOINT',
      };
      await tx.client.query(`${verb[req.op]} ${req.name}`);
      return undefined;
    }
    case 'commit':
    case 'rollback': {
      const open = tx;
      tx = undefined;
      if (!open) return undefined;
      try {
        await open.client.query(req.op === 'commit' ? 'COMMIT' : 'ROLLBACK');
        open.client.release();
      } catch (err) {
        open.client.release(err as Error); // a broken connection is not reused
        throw err;
      }
      return undefined;
    }
    case 'close':
      await pool.end();
      return undefined;
  }
}

/** Structured cloning turns a Buffer into a Uint8Array: the repositories bind Buffers. */
function revive(arg: unknown): unknown {
  return arg instanceof Uint8Array && !Buffer.isBuffer(arg)
    ? Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength)
    : arg;
}

function reply(message: BridgeReply): void {
  port.postMessage(message);
  // The main thread waits on the signal (Atomics.wait); the reply is on the port before it wakes.
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

/**
 * One request at a time, in order: after a call the main thread gave up on
 * (its timeout), what it sends next (the rollback) runs once that call is
 * over, never beside it on the same connection.
 */
let queue: Promise<void> = Promise.resolve();
port.on('message', (req: BridgeRequest) => {
  queue = queue.then(async () => {
    webhookWritten = false;
    try {
      const value = await handle(req);
      reply({ id: req.id, ok: true, value, webhookWritten });
    } catch (err) {
      const e = err as { message?: string; code?: string; name?: string };
      reply({
        id: req.id,
        ok: false,
        error: { name: e.name ?? 'Error', message: e.message ?? String(err), code: e.code },
        webhookWritten: false,
      });
    }
  });
});
