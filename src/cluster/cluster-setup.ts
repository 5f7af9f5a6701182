// How main.ts builds the store and, on PostgreSQL, this daemon's place among
// its peers (issue 27): the node id, the forwarding of hangups and
// transfers to the node holding a call, and the heartbeat.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { CallDispatcher } from '../calls/call-service.js';
import type { Dialer } from '../calls/dialer.js';
import { realTimers } from '../calls/timers.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import { openDatabase } from '../store/database.js';
import { openPgStore, type PgStore } from '../store/pg/pg-store.js';
import { createStore, type SqliteStore, type Store } from '../store/store.js';
import { ClusterNode } from './cluster-node.js';
import { ForwardingDispatcher } from './forwarding-dispatcher.js';

/**
 * This daemon's node id: configured, or its host name and SIP port (stable
 * across restarts); with a SIP port chosen by the OS, a random one (a
 * restart then leaves its calls to the peers, after the grace period).
 */
export function nodeIdOf(config: Config): string {
  if (config.cluster.nodeId) return config.cluster.nodeId;
  return `${hostname()}:${config.sip.port || randomUUID().slice(0, 8)}`;
}

/** PostgreSQL when store.url is set, else the SQLite file. */
export function openStore(config: Config, nodeId: string, clock: Clock): SqliteStore | PgStore {
  return config.store.url
    ? openPgStore({
        url: config.store.url,
        nodeId,
        poolMax: config.store.poolSize,
        timeoutMs: config.store.timeoutMs,
        clock,
      })
    : createStore(openDatabase(config.store.path), { timed: true, checkpointInWorker: true });
}

const isPg = (store: Store | PgStore): store is PgStore => store.kind === 'postgres';

/** The cluster key when peers may forward to this node (PostgreSQL and a key set), else ''. */
export function clusterKeyOf(config: Config, store: Store | PgStore): string {
  return isPg(store) ? config.cluster.key : '';
}

/** The dialer, or with a cluster key the dialer that forwards a peer's call to that peer (rule 5). */
export function dispatcherFor(
  config: Config,
  store: Store | PgStore,
  dialer: Dialer,
  nodeId: string,
  log: Logger,
): CallDispatcher {
  const key = clusterKeyOf(config, store);
  if (!key || !isPg(store)) return dialer;
  const nodes = store.nodes;
  return new ForwardingDispatcher(dialer, { ownerOf: (id) => nodes.ownerOf(id) }, nodeId, key, log);
}

/** The HTTP API's own address, or (listening on all interfaces) the advertised SIP host or host name. */
function defaultInternalUrl(config: Config, port: number): string {
  const any = ['0.0.0.0', '::', ''].includes(config.http.host);
  const host = any ? config.sip.advertisedHost || hostname() : config.http.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** On PostgreSQL: this node, joined and beating (undefined on SQLite). */
export function startClusterNode(
  config: Config,
  store: Store | PgStore,
  at: { nodeId: string; httpPort: number; sipPort: number | undefined },
  deps: { dialer: Dialer; clock: Clock; log: Logger },
): ClusterNode | undefined {
  if (!isPg(store)) return undefined;
  const node = new ClusterNode(
    {
      id: at.nodeId,
      sipAddress: `${config.sip.advertisedHost || config.sip.host}:${at.sipPort ?? config.sip.port}`,
      internalUrl: config.cluster.internalUrl || defaultInternalUrl(config, at.httpPort),
    },
    {
      nodes: store.nodes,
      calls: store.calls,
      adopt: (records, lost) => deps.dialer.adopt(records, lost),
      clock: deps.clock,
      timers: realTimers,
      log: deps.log,
    },
    {
      heartbeatMs: config.cluster.heartbeatSeconds * 1000,
      lostAfterMs: config.cluster.lostAfterSeconds * 1000,
    },
  );
  node.start();
  return node;
}
