// What the store bench measures on one configuration:
// - calls: whole-gateway calls offered at a rate, each to a number of its
//   own, answered by SIPp (echoing RTP) and hung up by it ~2 s later, the
//   stamp agent echoing the audio; the window runs from the first request to
//   the end of the last call, so every call's whole cost is in it;
// - api: initiate-call requests at a rate, every protection on, scheduled a
//   day ahead (as http-burst.ts sends them): validation, protections and the
//   store, no dialing.
// Both are open loop (a request leaves on schedule whatever the earlier ones
// are doing) and spread the requests over the configuration's daemons in turn.
import type { FarEnds } from '../../support/far-end.js';
import { heldCallScenario } from '../../support/held-call-scenario.js';
import type { TrackedCall } from '../gateway-load/call-tracker.js';
import { KEY, summary, type BurstReport } from '../http-burst.js';
import type { Cluster } from './cluster.js';
import { openCpuWindow, type CpuFigure, type Watched } from './process-cpu.js';

const AREAS = ['212', '646', '718', '917', '347', '929', '332', '201'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const INITIATE = '/api/v1/phones/calls/initiate-call';
/** A request unanswered after this long counts as unanswered (status 0). */
const REQUEST_TIMEOUT_MS = 30_000;

/** POST initiate-call to the daemon whose turn request `i` is; status 0 (and why) when unanswered. */
async function initiate(
  c: Cluster,
  i: number,
  body: object,
): Promise<{
  status: number;
  ms: number;
  body: { callId?: string; error?: string };
  failure?: string;
}> {
  const t0 = performance.now();
  try {
    const res = await fetch(c.nodes[i % c.nodes.length]!.daemon.baseUrl + INITIATE, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const json = (await res.json()) as { callId?: string; error?: string };
    return { status: res.status, ms: performance.now() - t0, body: json };
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string; message?: string } };
    const failure = e.cause?.code ?? e.cause?.message ?? e.name ?? String(err);
    return { status: 0, ms: performance.now() - t0, body: {}, failure };
  }
}

/** The i-th of 80,000 distinct valid US numbers. */
export function benchNumber(i: number): string {
  const area = AREAS[Math.floor(i / 10_000) % AREAS.length]!;
  return `+1${area}555${String(i % 10_000).padStart(4, '0')}`;
}

type Latency = ReturnType<typeof summary>;

/**
 * Calls `send(i)` for i in [0, count) at `rate` per second on a fixed
 * schedule, without waiting for earlier sends; resolves when all have
 * settled. `lateMs` is how far behind its schedule the worst send left
 * (the runner's own delay, which no latency below includes).
 */
export async function openLoop(
  rate: number,
  count: number,
  send: (i: number) => Promise<void>,
): Promise<{ lateMs: number }> {
  const t0 = performance.now();
  const all: Promise<void>[] = [];
  let lateMs = 0;
  for (let i = 0; i < count; i++) {
    const due = t0 + (i * 1000) / rate;
    const ahead = due - performance.now();
    if (ahead >= 1) await sleep(ahead);
    lateMs = Math.max(lateMs, performance.now() - due);
    all.push(send(i));
  }
  await Promise.all(all);
  return { lateMs: Math.round(lateMs * 10) / 10 };
}

/** What the phases need on a started configuration: an agent and a default trunk. */
export interface Rig {
  agentId: string;
  trunkId: string;
}

export async function rigUp(c: Cluster, agentUrl: string, farEndPort: number): Promise<Rig> {
  const post = async (path: string, body: object): Promise<string> => {
    const r = await c.nodes[0]!.daemon.api('POST', path, body, { 'x-api-key': KEY });
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return (r.json as { id: string }).id;
  };
  const agentId = await post('/api/v1/agents', {
    name: 'store-bench-echo',
    websocketUrl: agentUrl,
    outgoing: { maxDurationSeconds: 600 },
  });
  const trunkId = await post('/api/v1/phones/sip-trunks', {
    name: 'store-bench-far-end',
    host: '127.0.0.1',
    port: farEndPort,
    isDefault: true,
    callerIds: ['+12125550100'],
  });
  return { agentId, trunkId };
}

/** SIPp answering every call (RTP echoed) and sending BYE `holdMs` after the ACK. */
export async function startAnsweringFarEnd(
  farEnds: FarEnds,
  o: { holdMs: number; calls: number; timeoutSec: number },
): Promise<{ port: number; pid: number }> {
  const sipp = await farEnds.start(heldCallScenario(o.holdMs), {
    rtpEcho: true,
    calls: o.calls,
    timeoutSec: o.timeoutSec,
  });
  return { port: sipp.port, pid: sipp.pid };
}

/** What both phases report: the offer, the runner's own lateness, the CPU window. */
interface PhaseResult {
  offeredRate: number;
  seconds: number;
  runnerLateMs: number;
  windowSec: number;
  /** Per watched process: CPU in the window, ms per unit (completed call, answered request), % of a core. */
  cpu: Record<string, CpuFigure>;
}

export interface CallsResult extends PhaseResult {
  placed: number;
  accepted: number;
  /** Not accepted, by HTTP status (`unanswered: <why>` for no answer). */
  refusedByStatus: Record<string, number>;
  /** Final status answered (the far end hung up after the hold). */
  completed: number;
  /** Final statuses of the accepted calls; `unfinished` for any still live when the wait ended. */
  outcomes: Record<string, number>;
  /** completed ÷ the offered seconds (the rate the far end saw if the daemons kept up). */
  completedPerOfferedSecond: number;
  /** From the first request to the last one accepted, s: longer than `seconds` when the daemons fell behind. */
  acceptedOverSec: number;
  /** completed ÷ the longer of `seconds` and `acceptedOverSec`: the rate actually carried. */
  sustainedCps: number;
  initiateMs: Latency;
}

export async function callsPhase(
  c: Cluster,
  rig: Rig,
  watched: Watched[],
  o: { rate: number; seconds: number; holdMs: number },
): Promise<CallsResult> {
  const count = Math.round(o.rate * o.seconds);
  const first = c.takeNumbers(count);
  const admitted: TrackedCall[] = [];
  const refusedByStatus: Record<string, number> = {};
  const latencies: number[] = [];
  const close = openCpuWindow(watched);
  const t0 = performance.now();
  let lastAcceptedMs = 0;
  const { lateMs } = await openLoop(o.rate, count, async (i) => {
    const placedAt = Date.now();
    const r = await initiate(c, i, {
      destinationNumber: benchNumber(first + i),
      agentId: rig.agentId,
      sipTrunkId: rig.trunkId,
      useAntiHarassmentProtection: true,
      overrideTimeRestriction: true,
      overrideDayRestriction: true,
      maxRetries: 0,
    });
    if (r.status === 0) {
      const k = `unanswered: ${r.failure}`;
      refusedByStatus[k] = (refusedByStatus[k] ?? 0) + 1;
      return;
    }
    latencies.push(r.ms);
    if (r.status !== 200 || !r.body.callId) {
      refusedByStatus[r.status] = (refusedByStatus[r.status] ?? 0) + 1;
      return;
    }
    lastAcceptedMs = performance.now() - t0;
    const call: TrackedCall = {
      callId: r.body.callId,
      probe: false,
      placedAt,
      apiMs: r.ms,
      httpStatus: r.status,
    };
    // Whichever daemon logs the call's events, the same record learns them.
    for (const n of c.nodes) n.tracker.add(call);
    admitted.push(call);
  });
  const until = performance.now() + o.holdMs + 20_000;
  while (admitted.some((a) => a.endedAt === undefined) && performance.now() < until)
    await sleep(50);
  const w = close();
  const outcomes: Record<string, number> = {};
  for (const a of admitted) {
    const k = a.endedAt === undefined ? 'unfinished' : (a.outcome ?? 'unknown');
    outcomes[k] = (outcomes[k] ?? 0) + 1;
  }
  const completed = outcomes.answered ?? 0;
  return {
    offeredRate: o.rate,
    seconds: o.seconds,
    placed: count,
    accepted: admitted.length,
    refusedByStatus,
    completed,
    outcomes,
    completedPerOfferedSecond: Math.round((completed / o.seconds) * 100) / 100,
    acceptedOverSec: Math.round(lastAcceptedMs / 10) / 100,
    sustainedCps: Math.round((completed / Math.max(o.seconds, lastAcceptedMs / 1000)) * 100) / 100,
    initiateMs: summary(latencies),
    runnerLateMs: lateMs,
    windowSec: Math.round(w.seconds * 100) / 100,
    cpu: w.per(completed),
  };
}

/** The burst's figures as http-burst.ts reports them, and per daemon. */
export interface ApiResult
  extends
    PhaseResult,
    Pick<
      BurstReport,
      | 'sent'
      | 'byStatus'
      | 'byError'
      | 'unanswered'
      | 'serverErrors'
      | 'latencyMs'
      | 'acceptedLatencyMs'
    > {
  /** Why the unanswered ones were (the client's error: a timeout, a connection reset…). */
  unansweredBy: Record<string, number>;
  /** Every answer's latency, per daemon (in the order started). */
  latencyMsByDaemon: Latency[];
}

export async function apiPhase(
  c: Cluster,
  rig: Rig,
  watched: Watched[],
  o: { rate: number; seconds: number },
): Promise<ApiResult> {
  const count = Math.round(o.rate * o.seconds);
  const first = c.takeNumbers(count);
  const scheduledAt = new Date(Date.now() + 86_400_000).toISOString();
  const all: number[] = [];
  const accepted: number[] = [];
  const byDaemon: number[][] = c.nodes.map(() => []);
  const byStatus: Record<string, number> = {};
  const byError: Record<string, number> = {};
  let unanswered = 0;
  const unansweredBy: Record<string, number> = {};
  const close = openCpuWindow(watched);
  const { lateMs } = await openLoop(o.rate, count, async (i) => {
    const r = await initiate(c, i, {
      destinationNumber: benchNumber(first + i),
      agentId: rig.agentId,
      scheduledAt,
      useAntiHarassmentProtection: true,
    });
    if (r.status === 0) {
      unanswered++;
      unansweredBy[r.failure!] = (unansweredBy[r.failure!] ?? 0) + 1;
      return;
    }
    all.push(r.ms);
    byDaemon[i % c.nodes.length]!.push(r.ms);
    if (r.status === 200) accepted.push(r.ms);
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    if (r.body.error) byError[r.body.error] = (byError[r.body.error] ?? 0) + 1;
  });
  const w = close();
  return {
    offeredRate: o.rate,
    seconds: o.seconds,
    sent: count,
    byStatus,
    byError,
    unanswered,
    unansweredBy,
    serverErrors: Object.entries(byStatus)
      .filter(([s]) => Number(s) >= 500 && Number(s) !== 503)
      .reduce((a, [, n]) => a + n, 0),
    latencyMs: summary(all),
    acceptedLatencyMs: summary(accepted),
    latencyMsByDaemon: byDaemon.map(summary),
    runnerLateMs: lateMs,
    windowSec: Math.round(w.seconds * 100) / 100,
    cpu: w.per(all.length),
  };
}
