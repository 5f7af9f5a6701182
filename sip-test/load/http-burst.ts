// HTTP burst against the started daemon (`npm start`, own SQLite file):
// initiate-call requests at a fixed offered rate, open loop (a request leaves
// on schedule whether or not earlier ones were answered), every protection
// on, each number sent twice. What must hold at any rate: every request is
// answered within the bound, 0 × 500, every 503 carries Retry-After, and no
// number is accepted twice. Calls are scheduled a day ahead, so the burst
// measures the API path (validation, protections, SQLite), not the dialing.
//
//   npx tsx sip-test/load/http-burst.ts [--rate 400] [--seconds 30] [--bound-ms 5000]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CONFIG_SCHEMA } from '../../src/config/config-schema.js';
import { startDaemon, type Daemon } from '../../test/support/daemon.js';

export interface BurstOptions {
  rate: number;
  seconds: number;
  /** A request still unanswered after this long counts as a violation. */
  boundMs: number;
  /** Index of the first number dialed (a second burst on the same daemon starts elsewhere). */
  firstNumber?: number;
}

export interface BurstReport {
  offeredRate: number;
  seconds: number;
  sent: number;
  byStatus: Record<string, number>;
  byError: Record<string, number>;
  /** Latency of every answer, ms: p50, p99, max. */
  latencyMs: { p50: number; p99: number; max: number };
  acceptedLatencyMs: { p50: number; p99: number; max: number };
  overBound: number;
  unanswered: number;
  serverErrors: number;
  unavailableWithoutRetryAfter: number;
  duplicatesAccepted: number;
  daemonCpuPct: number;
}

export const KEY = 'http-burst-bootstrap-key-0123456789abcdef';
const AREAS = ['212', '646', '718', '917', '347', '929', '332', '201'];

/** The i-th distinct valid US number. */
function numberOf(i: number): string {
  return `+1${AREAS[Math.floor(i / 10_000) % AREAS.length]}555${String(i % 10_000).padStart(4, '0')}`;
}

export async function runHttpBurst(daemon: Daemon, o: BurstOptions): Promise<BurstReport> {
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  // Set-up calls honour a 503's Retry-After (a daemon just started may still be shedding).
  const setUp = async (path: string, body: object): Promise<{ id: string }> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await daemon.api('POST', path, body, { 'x-api-key': KEY });
      if (res.status === 201) return res.json as { id: string };
      if (res.status !== 503) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.json)}`);
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    }
    throw new Error(`${path}: still refused`);
  };
  const agent = await setUp('/api/v1/agents', {
    name: 'burst',
    websocketUrl: 'ws://127.0.0.1:9/unused',
  });
  await setUp('/api/v1/phones/sip-trunks', {
    name: 'burst',
    host: '127.0.0.1',
    port: 9,
    isDefault: true,
    callerIds: ['+12125550100'],
  });
  const agentId = agent.id;
  const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();

  const total = Math.round(o.rate * o.seconds);
  const latencies: number[] = [];
  const acceptedLatencies: number[] = [];
  const byStatus: Record<string, number> = {};
  const byError: Record<string, number> = {};
  const acceptedPerNumber = new Map<string, number>();
  let overBound = 0;
  let unanswered = 0;
  let unavailableWithoutRetryAfter = 0;
  const pending: Array<Promise<void>> = [];

  const send = async (i: number): Promise<void> => {
    // Every number twice, the copy about half a second after the first: never accepted both times.
    const k = i % 2 === 0 ? i / 2 : Math.max(0, (i - 1) / 2 - Math.round(o.rate / 4));
    const n = numberOf(k + (o.firstNumber ?? 0));
    const start = performance.now();
    try {
      const res = await fetch(`${daemon.baseUrl}/api/v1/phones/calls/initiate-call`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ destinationNumber: n, agentId, scheduledAt }),
        signal: AbortSignal.timeout(o.boundMs * 3),
      });
      const body = (await res.json()) as { error?: string };
      const ms = performance.now() - start;
      latencies.push(ms);
      if (ms > o.boundMs) overBound++;
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
      if (body.error) byError[body.error] = (byError[body.error] ?? 0) + 1;
      if (res.status === 503 && !res.headers.get('retry-after')) unavailableWithoutRetryAfter++;
      if (res.status === 200) {
        acceptedLatencies.push(ms);
        acceptedPerNumber.set(n, (acceptedPerNumber.get(n) ?? 0) + 1);
      }
    } catch {
      unanswered++;
    }
  };

  const cpuBefore = cpuTicks(daemon.pid);
  const t0 = performance.now();
  // Open loop: a tick every 10 ms sends what the schedule says is due by now.
  await new Promise<void>((resolve) => {
    let sent = 0;
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * o.rate));
      while (sent < due) pending.push(send(sent++));
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
  });
  await Promise.all(pending);
  const elapsedS = (performance.now() - t0) / 1000;
  const cpuAfter = cpuTicks(daemon.pid);

  return {
    offeredRate: o.rate,
    seconds: o.seconds,
    sent: total,
    byStatus,
    byError,
    latencyMs: summary(latencies),
    acceptedLatencyMs: summary(acceptedLatencies),
    overBound,
    unanswered,
    serverErrors: Object.entries(byStatus)
      .filter(([s]) => Number(s) >= 500 && Number(s) !== 503)
      .reduce((a, [, c]) => a + c, 0),
    unavailableWithoutRetryAfter,
    duplicatesAccepted: [...acceptedPerNumber.values()].filter((c) => c > 1).length,
    daemonCpuPct:
      cpuBefore !== undefined && cpuAfter !== undefined
        ? Math.round(((cpuAfter - cpuBefore) / 100 / elapsedS) * 1000) / 10
        : -1,
  };
}

/** The daemon set up for a burst: every protection on, the rate limit out of the way. */
export function startBurstDaemon(env: Record<string, string> = {}): Promise<Daemon> {
  return startDaemon({
    GATEWAY_BOOTSTRAP_API_KEY: KEY,
    GATEWAY_RATE_LIMIT_MAX: '10000000',
    GATEWAY_LOG_LEVEL: 'info',
    GATEWAY_SIP_OPTIONS_PING_SECONDS: '0',
    // the shipped shedding thresholds (the test harness turns the loop-delay one off)
    GATEWAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: String(
      CONFIG_SCHEMA.find((e) => e.key === 'http.maxEventLoopDelayMs')!.default,
    ),
    ...env,
  });
}

export function summary(values: number[]): { p50: number; p99: number; max: number } {
  if (values.length === 0) return { p50: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const r = (x: number) => Math.round(x * 10) / 10;
  return { p50: r(at(0.5)), p99: r(at(0.99)), max: r(sorted[sorted.length - 1]!) };
}

/** utime + stime of a process, in clock ticks (Linux), or undefined. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '400' },
      seconds: { type: 'string', default: '30' },
      'bound-ms': { type: 'string', default: '5000' },
    },
  });
  const daemon = await startBurstDaemon();
  try {
    const report = await runHttpBurst(daemon, {
      rate: Number(values.rate),
      seconds: Number(values.seconds),
      boundMs: Number(values['bound-ms']),
    });
    const refusalLines = daemon
      .output()
      .split('\n')
      .filter((l) => l.includes('refused with 503'));
    console.log(JSON.stringify({ ...report, refusalLogLines: refusalLines.length }, null, 2));
  } finally {
    await daemon.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
