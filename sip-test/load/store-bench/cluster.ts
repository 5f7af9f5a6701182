// The three stores under test, each started as the README says (`npm start`):
// one daemon on its own SQLite file, one daemon on a fresh PostgreSQL
// database, two daemons on one PostgreSQL database. Every daemon has every
// protection on and nothing that sheds or rate-limits the bench's requests
// (the bench measures the work, not the refusals), its own RTP range, and
// its log followed by a CallTracker (the calls' lifecycle without polling).
import { startGateway, type Gateway } from '../gateway-load/gateway-client.js';
import { KEY } from '../http-burst.js';
import { TestPools, type PostgresServer } from '../../support/postgres.js';
import { postgresDatabase } from '../../support/store-under-test.js';
import { oneProcess, processTree, type Watched } from './process-cpu.js';

export const CONFIGS = ['sqlite-1', 'postgres-1', 'postgres-2'] as const;
export type ConfigName = (typeof CONFIGS)[number];

const CLUSTER_KEY = 'store-bench-cluster-key-0123456789abcdef';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Cluster {
  name: ConfigName;
  store: 'sqlite' | 'postgres';
  nodes: Gateway[];
  /** The daemons, then PostgreSQL (postmaster and backends) when it is the store. */
  watched: Watched[];
  /** Next unused index into the destination numbers: a fresh database has dialed none. */
  takeNumbers(count: number): number;
  /** The daemons' warn and error log lines so far, counted by message. */
  warnings(): Record<string, number>;
  stop(): Promise<void>;
}

/** pino levels 40 (warn) and up in a daemon's output, counted by message. */
function logWarnings(output: string, into: Record<string, number>): void {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !/"level":(4|5|6)\d/.test(line)) continue;
    try {
      const e = JSON.parse(line) as { msg?: string; err?: { message?: string } };
      const k = `${e.msg ?? '?'}${e.err?.message ? `: ${e.err.message.slice(0, 120)}` : ''}`;
      into[k] = (into[k] ?? 0) + 1;
    } catch {
      // a partial line
    }
  }
}

/** Daemon environment common to every configuration. */
function daemonEnv(rtp: [number, number]): Record<string, string> {
  return {
    GATEWAY_BOOTSTRAP_API_KEY: KEY,
    GATEWAY_LOG_LEVEL: 'info',
    GATEWAY_SIP_OPTIONS_PING_SECONDS: '0',
    GATEWAY_RTP_PORT_MIN: String(rtp[0]),
    GATEWAY_RTP_PORT_MAX: String(rtp[1]),
    // measure, do not shed: no rate limit, no in-flight cap, no loop-delay refusals
    GATEWAY_RATE_LIMIT_MAX: '10000000',
    GATEWAY_HTTP_MAX_CALL_REQUESTS_IN_FLIGHT: '100000',
    GATEWAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: '0',
  };
}

/** SIGTERM, then SIGKILL to the daemon's process group if it is still there after 8 s. */
export async function stopNode(g: Gateway): Promise<void> {
  const late = await Promise.race([
    g.daemon.stop('SIGTERM').then(() => false),
    sleep(8000).then(() => true),
  ]);
  if (late) await g.daemon.stop('SIGKILL');
}

/**
 * Starts a configuration. `rtp` is split evenly between its daemons. On
 * PostgreSQL the daemons are started one after the other on a fresh
 * migrated database of `server`.
 */
export async function startCluster(
  name: ConfigName,
  opts: { server?: PostgresServer; rtp: [number, number] },
): Promise<Cluster> {
  const count = name === 'postgres-2' ? 2 : 1;
  const store = name === 'sqlite-1' ? 'sqlite' : 'postgres';
  const pools = new TestPools();
  const nodes: Gateway[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map(stopNode));
    await pools.end();
  };
  try {
    let dbEnv: Record<string, string> = {};
    if (store === 'postgres') {
      if (!opts.server) throw new Error(`${name}: no PostgreSQL server`);
      const { url } = await postgresDatabase(opts.server, pools, 1);
      // the migration's pool is not the daemons': close it before they start
      await pools.end();
      dbEnv = { GATEWAY_DATABASE_URL: url, GATEWAY_CLUSTER_KEY: CLUSTER_KEY };
    }
    const span = Math.floor((opts.rtp[1] - opts.rtp[0] + 1) / count);
    for (let i = 0; i < count; i++) {
      const min = opts.rtp[0] + i * span;
      nodes.push(
        await startGateway({
          ...daemonEnv([min - (min % 2), min - (min % 2) + span - 2]),
          ...dbEnv,
          ...(store === 'postgres' ? { GATEWAY_NODE_ID: `bench-node-${i + 1}` } : {}),
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  let next = 0;
  return {
    name,
    store,
    nodes,
    watched: [
      ...nodes.map((n, i) => oneProcess(`daemon-${i + 1}`, n.daemon.pid)),
      ...(opts.server ? [processTree('postgres', opts.server.pid)] : []),
    ],
    warnings: () => {
      const counts: Record<string, number> = {};
      for (const node of nodes) logWarnings(node.daemon.output(), counts);
      return counts;
    },
    takeNumbers: (n) => {
      const first = next;
      next += n;
      return first;
    },
    stop,
  };
}
