// The PostgreSQL store's worker thread (issue 27; docs/decisions/
// multi-node-store.md "How the daemon talks to PostgreSQL"). It owns the
// pool and the asynchronous repositories; the main thread asks for one
// repository call or transaction step at a time and waits for the answer
// (store-bridge.ts). A request names its transaction (`tx`); each
// transaction's steps run in order on its own connection, and a transaction
// whose commit the main thread no longer waits for (the bridge's
// `commitAsync`) commits beside the next one.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { currentThreadId } from '../../thread-cpu.js';
import { ConfigGenerations } from './config-generations.js';
import { listenForConfigChanges } from './config-listener.js';
import { migratePg } from './pg-migrations.js';
import { PgNodeRegistry } from './pg-node-registry.js';
import { PreparedClient } from './prepared-client.js';
import { beginLocked, lockKeys } from './pg-unit-of-work.js';
import { makePgRepositories, type PgRepositories } from './pg-repositories.js';
import type { BridgeReply, BridgeRequest, StoreWorkerData } from './store-bridge-protocol.js';

const data = workerData as StoreWorkerData;
const port: MessagePort = data.port;
const signal = new Int32Array(data.signal);
// Who this thread is, for the daemon's CPU by thread (thread-cpu.ts).
parentPort?.postMessage({ tid: currentThreadId() });

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

/** How soon a lost listening connection is tried again. */
const LISTEN_RETRY_MS = 1_000;
const listener = listenForConfigChanges({
  url: data.url,
  generations: new ConfigGenerations(data.generations),
  retryMs: LISTEN_RETRY_MS,
  setTimer: setTimeout,
  applicationName: `gateway ${data.nodeId} config`,
});

/** The webhook deliveries written outside any transaction since the last answer. */
let writtenOutside = false;
const outside = makePgRepositories(pool, data.nodeId, () => (writtenOutside = true));
const nodes = new PgNodeRegistry(pool);

/**
 * An open transaction. `failed` is the first error of one of its steps: the
 * main thread may have posted the steps after it without waiting (bridge
 * `post`), so they fail with it, and its commit rolls back. A transaction
 * whose BEGIN failed has no client: its steps must not run outside it.
 * `queue` runs its steps one after another: after a step the main thread
 * gave up on (its timeout), what it sends next (the rollback) runs once that
 * step is over, never beside it on the same connection.
 */
interface Tx {
  client?: pg.PoolClient;
  repos?: PgRepositories;
  failed?: Error;
  webhookWritten: boolean;
  queue: Promise<void>;
}
const txs = new Map<number, Tx>();

async function handle(req: BridgeRequest, tx: Tx | undefined): Promise<unknown> {
  switch (req.op) {
    case 'migrate':
      return migratePg(pool);
    case 'call': {
      // The node registry keeps its own transactions (it is never part of the caller's).
      if (tx?.failed && req.repo !== 'nodes') throw tx.failed;
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
      if (!tx || tx.client || tx.failed) throw new Error('a transaction is already open');
      try {
        tx.client = await pool.connect();
      } catch (err) {
        tx.failed = err as Error;
        throw err;
      }
      try {
        await beginLocked(tx.client, req.keys); // rule 2
      } catch (err) {
        await tx.client.query('ROLLBACK').catch(() => undefined);
        tx.client.release();
        tx.client = undefined;
        tx.failed = err as Error;
        throw err;
      }
      const open = tx;
      open.repos = makePgRepositories(tx.client, data.nodeId, () => (open.webhookWritten = true));
      return undefined;
    }
    case 'lock': {
      if (!tx?.client || tx.failed) throw tx?.failed ?? new Error('no transaction is open');
      await lockKeys(tx.client, req.keys);
      return undefined;
    }
    case 'savepoint':
    case 'release':
    case 'rollbackTo': {
      if (!tx?.client || (tx.failed && req.op !== 'rollbackTo'))
        throw tx?.failed ?? new Error('no transaction is open');
      const verb = {
        savepoint: 'SAVEPOINT',
        release: 'RELEASE SAVEPOINT',
        rollbackTo: 'ROLLBACK TO SAVEPOINT',
      };
      await tx.client.query(`${verb[req.op]} ${req.name}`);
      // Back to a savepoint taken before the failure, the transaction goes on.
      if (req.op === 'rollbackTo') delete tx.failed;
      return undefined;
    }
    case 'commit':
    case 'rollback': {
      if (req.tx !== undefined) txs.delete(req.tx);
      if (!tx?.client) {
        if (req.op === 'commit' && tx?.failed) throw tx.failed;
        return undefined;
      }
      const commit = req.op === 'commit' && !tx.failed;
      try {
        await tx.client.query(commit ? 'COMMIT' : 'ROLLBACK');
        tx.client.release();
      } catch (err) {
        tx.client.release(err as Error); // a broken connection is not reused
        throw err;
      } finally {
        tx.client = undefined;
      }
      if (req.op === 'commit' && tx.failed) throw tx.failed;
      return undefined;
    }
    case 'close':
      await listener.close();
      await pool.end();
      return undefined;
  }
}

/** A step inside the transaction (not the registry's, not its end). */
function isStep(req: BridgeRequest): boolean {
  return (
    (req.op === 'call' && req.repo !== 'nodes') ||
    req.op === 'lock' ||
    req.op === 'savepoint' ||
    req.op === 'release'
  );
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

async function answer(req: BridgeRequest, tx: Tx | undefined): Promise<void> {
  try {
    const value = await handle(req, tx);
    // The deliveries a transaction wrote are told with its commit, once they can be read.
    const written = tx ? req.op === 'commit' && tx.webhookWritten : writtenOutside;
    if (!tx) writtenOutside = false;
    reply({ id: req.id, ok: true, value, webhookWritten: written });
  } catch (err) {
    if (tx && !tx.failed && isStep(req)) tx.failed = err as Error;
    const e = err as { message?: string; code?: string; name?: string };
    reply({
      id: req.id,
      ok: false,
      error: { name: e.name ?? 'Error', message: e.message ?? String(err), code: e.code },
      webhookWritten: false,
    });
  }
}

port.on('message', (req: BridgeRequest) => {
  if (req.tx === undefined) {
    void answer(req, undefined);
    return;
  }
  let tx = txs.get(req.tx);
  if (!tx) {
    tx = { webhookWritten: false, queue: Promise.resolve() };
    // A step of a transaction that is over (or never began) must not run outside one.
    if (req.op === 'begin') txs.set(req.tx, tx);
    else tx.failed = new Error('no transaction is open');
  }
  const open = tx;
  open.queue = open.queue.then(() => answer(req, open));
});
