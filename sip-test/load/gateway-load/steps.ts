// The two kinds of step the phases are made of:
// - hold: place `target` calls at `rate`, hold them all through a window,
//   hang them all up (baseline, concurrency ramp, overload);
// - churn: place calls at `rate` for `seconds`, each hung up after `holdSec`,
//   and measure the steady state (call-rate ramp, soak).
import type { TrackedCall } from './call-tracker.js';
import type { Tenant } from './gateway-client.js';
import { openWindow, type Observed, type WindowResult } from './measure.js';
import type { Progress } from './progress.js';
import { quantile, round } from './stats.js';

const FRAME_RATE = 50;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface QualityLimits {
  lossPct: number;
  spacingP99Ms: number;
  loopP99Ms: number;
  cpuPct: number;
  /** initiate-call round trip p99, ms: checked on the call-rate ramp's steps. */
  apiP99Ms: number;
}

export interface StepContext extends Observed {
  tenant: Tenant;
  progress: Progress;
  probeEvery: number;
  limits: QualityLimits;
  /** Daemon CPU % with no calls, measured before the first phase. */
  idleCpuPct: number;
  idleRssKb: number;
  idleFds: number;
}

export interface StepResult {
  phase: string;
  label: string;
  /** Calls held together (hold) or the mean concurrency in the window (churn). */
  concurrent: number;
  ratePerSec: number;
  placed: number;
  admitted: number;
  refusedByStatus: Record<string, number>;
  answered: number;
  failed: number;
  sustainedCps: number;
  apiMs: { p50: number; p99: number };
  inviteTo200Ms: { p50: number; p99: number };
  /** The initiate-call request leaving the runner until the daemon logs its INVITE sent, ms. */
  requestToInviteMs: { p50: number; p99: number };
  windowSec: number;
  cpuPct: number;
  cpuPctPerCall: number;
  cpuPctPerCallAboveIdle: number;
  /** SIPp, the probe, the agent and the runner together, % of one core. */
  generatorsCpuPct: number;
  /** The whole machine, % of one core (every process, other tenants' too). */
  machineBusyPct: number;
  rssKbPerCall: number;
  fdsPerCall: number;
  loopP99Ms: number;
  /** External (probe): packets the gateway sent ÷ 50/s × flow time, and |gap − 20 ms| on arrival. */
  rtpOutRatio: number;
  spacingP50Ms: number;
  spacingP99Ms: number;
  probeFlows: number;
  /** All answered calls, from their records' networkQuality. */
  lossPct: number;
  rtpInRatio: number;
  /** External: RTP probe → stamping agent, and agent → probe (other processes' scheduling included). */
  rtpToAgentMs: { count: number; p50: number; p99: number };
  agentToRtpMs: { count: number; p50: number; p99: number };
  /** In-daemon (its /metrics): the bridge's added latency each way, and its pacing schedule's spacing. */
  daemonRtpToWsMs: { count: number; p50: number; p99: number };
  daemonWsToRtpMs: { count: number; p50: number; p99: number };
  daemonAgentAudioWaitMs: { count: number; p50: number; p99: number };
  daemonSpacingP50Ms: number;
  daemonSpacingP99Ms: number;
  pacingSkippedTicks: number;
  agentStreams: number;
  /** Where the daemon's time went (issue 28's breakdown), per call and per thread. */
  components: ComponentFigures;
  window: WindowResult;
  broken: string[];
}

/**
 * The daemon's components in the window, from its /metrics. Per call means
 * per call answered in the window (churn) or per call held (hold).
 */
export interface ComponentFigures {
  perCallOf: number;
  /** SQLite (0 on PostgreSQL): write statements, and commits with the WAL synced (FULL) or not. */
  storeWritesPerCall: number;
  storeWriteMsPerCall: number;
  fullCommitsPerCall: number;
  fullCommitMsPerCall: number;
  fullCommitP50Ms: number;
  fullCommitP99Ms: number;
  normalCommitsPerCall: number;
  normalCommitMsPerCall: number;
  /** The WAL's group fsyncs (off the event loop) in the window, per call, and each one's duration. */
  fsyncsPerCall: number;
  fsyncP50Ms: number;
  fsyncP99Ms: number;
  /** The agents' WebSocket set-up. */
  agentConnects: number;
  agentConnectP50Ms: number;
  agentConnectP99Ms: number;
  /** The media worker's event-loop p99 beyond its 10 ms sampling (the main thread's is `loopP99Ms`). */
  mediaLoopP99Ms: number;
  /** % of a core, and ms of CPU per call, by thread. */
  cpuPctByThread: Record<string, number>;
  cpuMsPerCallByThread: Record<string, number>;
}

/** prom-client and the media worker sample their loops with a 10 ms timer; Node records the whole interval. */
const LOOP_SAMPLING_MS = 10;

export function componentFigures(w: WindowResult, perCallOf: number): ComponentFigures {
  const d = w.daemon;
  const per = (x: number, digits = 3) => round(perCallOf > 0 ? x / perCallOf : NaN, digits);
  const cpuPctByThread: Record<string, number> = {};
  const cpuMsPerCallByThread: Record<string, number> = {};
  for (const [thread, sec] of Object.entries(d.threadCpuSeconds)) {
    cpuPctByThread[thread] = round((sec / Math.max(w.seconds, 1e-9)) * 100, 2);
    cpuMsPerCallByThread[thread] = per(sec * 1000);
  }
  return {
    perCallOf,
    storeWritesPerCall: per(d.storeWriteMs.count, 2),
    storeWriteMsPerCall: per(d.storeWriteMs.sum),
    fullCommitsPerCall: per(d.storeCommitFullMs.count, 2),
    fullCommitMsPerCall: per(d.storeCommitFullMs.sum),
    fullCommitP50Ms: d.storeCommitFullMs.p50,
    fullCommitP99Ms: d.storeCommitFullMs.p99,
    normalCommitsPerCall: per(d.storeCommitNormalMs.count, 2),
    normalCommitMsPerCall: per(d.storeCommitNormalMs.sum),
    fsyncsPerCall: per(d.storeFsyncMs.count, 2),
    fsyncP50Ms: d.storeFsyncMs.p50,
    fsyncP99Ms: d.storeFsyncMs.p99,
    agentConnects: d.agentConnectMs.count,
    agentConnectP50Ms: d.agentConnectMs.p50,
    agentConnectP99Ms: d.agentConnectMs.p99,
    mediaLoopP99Ms: round(Math.max(0, d.mediaWorkerRawLoopP99Ms - LOOP_SAMPLING_MS), 2),
    cpuPctByThread,
    cpuMsPerCallByThread,
  };
}

/** Places `count` calls (or until `until`) at `rate` per second; resolves when all answered. */
async function placeAtRate(
  ctx: StepContext,
  rate: number,
  count: number,
  tenant: Tenant,
  onAdmitted: (call: TrackedCall) => void = () => undefined,
): Promise<{ placed: number; admitted: TrackedCall[]; refused: Record<string, number> }> {
  const admitted: TrackedCall[] = [];
  const refused: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  let placed = 0;
  for (let i = 0; i < count; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= 200) await Promise.race(inFlight);
    // the first call of every step, then every probeEvery-th, goes to the probe
    const probe = i % ctx.probeEvery === 0;
    placed++;
    const p = tenant.place(probe).then((r) => {
      if (r.call) {
        admitted.push(r.call);
        onAdmitted(r.call);
      } else refused[String(r.status)] = (refused[String(r.status)] ?? 0) + 1;
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    ctx.progress.update({ placed: 1 });
  }
  await Promise.all(inFlight);
  return { placed, admitted, refused };
}

async function waitFor(pred: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > end) return false;
    await sleep(100);
  }
  return true;
}

async function mapLimited<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

/** Loss and received ÷ expected over the answered calls, from their records. */
async function mediaFromRecords(
  tenant: Tenant,
  calls: TrackedCall[],
): Promise<{ lossPct: number; rtpInRatio: number }> {
  let received = 0;
  let lost = 0;
  let expected = 0;
  await mapLimited(calls, 16, async (c) => {
    const rec = await tenant.record(c.callId);
    const q = rec?.networkQuality as { packetsReceived?: number; packetsLost?: number } | undefined;
    if (!q || c.answeredAt === undefined || c.endedAt === undefined) return;
    received += q.packetsReceived ?? 0;
    lost += q.packetsLost ?? 0;
    expected += ((c.endedAt - c.answeredAt) / 1000) * FRAME_RATE;
  });
  return {
    lossPct: received + lost > 0 ? (lost / (received + lost)) * 100 : NaN,
    rtpInRatio: expected > 0 ? received / expected : NaN,
  };
}

function summarize(
  ctx: StepContext,
  base: Pick<
    StepResult,
    'phase' | 'label' | 'concurrent' | 'ratePerSec' | 'placed' | 'sustainedCps'
  > & { perCallOf: number },
  admitted: TrackedCall[],
  refused: Record<string, number>,
  w: WindowResult,
  media: { lossPct: number; rtpInRatio: number },
): StepResult {
  const answered = admitted.filter((c) => c.answeredAt !== undefined);
  const inviteTo200 = answered
    .filter((c) => c.inviteAt !== undefined)
    .map((c) => c.answeredAt! - c.inviteAt!);
  const api = admitted.map((c) => c.apiMs);
  const requestToInvite = admitted
    .filter((c) => c.inviteAt !== undefined)
    .map((c) => c.inviteAt! - c.placedAt);
  const n = Math.max(1, base.concurrent);
  const { perCallOf, ...step } = base;
  const r: StepResult = {
    ...step,
    admitted: admitted.length,
    refusedByStatus: refused,
    answered: answered.length,
    failed: admitted.length - answered.length,
    apiMs: { p50: round(quantile(api, 0.5), 2), p99: round(quantile(api, 0.99), 2) },
    inviteTo200Ms: { p50: quantile(inviteTo200, 0.5), p99: quantile(inviteTo200, 0.99) },
    requestToInviteMs: {
      p50: quantile(requestToInvite, 0.5),
      p99: quantile(requestToInvite, 0.99),
    },
    windowSec: round(w.seconds, 2),
    cpuPct: round(w.cpuPct, 2),
    cpuPctPerCall: round(w.cpuPct / n, 4),
    cpuPctPerCallAboveIdle: round((w.cpuPct - ctx.idleCpuPct) / n, 4),
    generatorsCpuPct: round(w.generatorsCpuPct, 1),
    machineBusyPct: round(w.machineBusyPct, 1),
    rssKbPerCall: round((w.rssKb - ctx.idleRssKb) / n, 1),
    fdsPerCall: round((w.fds - ctx.idleFds) / n, 2),
    loopP99Ms: round(w.loopP99Ms, 2),
    rtpOutRatio: round(w.probe.expected > 0 ? w.probe.packets / w.probe.expected : NaN, 4),
    spacingP50Ms: w.probe.spacingMs.p50,
    spacingP99Ms: w.probe.spacingMs.p99,
    probeFlows: w.probe.flows,
    lossPct: round(media.lossPct, 4),
    rtpInRatio: round(media.rtpInRatio, 4),
    rtpToAgentMs: pick(w.agent.rtpToAgentMs),
    agentToRtpMs: pick(w.probe.agentToRtpMs),
    daemonRtpToWsMs: w.daemon.rtpToWsMs,
    daemonWsToRtpMs: w.daemon.wsToRtpMs,
    daemonAgentAudioWaitMs: w.daemon.agentAudioWaitMs,
    daemonSpacingP50Ms: w.daemon.sendSpacingMs.p50,
    daemonSpacingP99Ms: w.daemon.sendSpacingMs.p99,
    pacingSkippedTicks: w.daemon.pacingSkippedTicks,
    agentStreams: w.agent.started,
    components: componentFigures(w, perCallOf),
    window: w,
    broken: [],
  };
  const L = ctx.limits;
  if (r.failed > 0) r.broken.push(`${r.failed} admitted calls not answered`);
  if (r.lossPct > L.lossPct) r.broken.push(`loss ${r.lossPct} % > ${L.lossPct} %`);
  if (r.spacingP99Ms > L.spacingP99Ms)
    r.broken.push(`send spacing p99 ${r.spacingP99Ms} ms > ${L.spacingP99Ms} ms`);
  if (r.loopP99Ms > L.loopP99Ms)
    r.broken.push(`event-loop p99 ${r.loopP99Ms} ms > ${L.loopP99Ms} ms`);
  if (r.cpuPct > L.cpuPct) r.broken.push(`daemon CPU ${r.cpuPct} % > ${L.cpuPct} % of a core`);
  return r;
}

const pick = (h: { count: number; p50: number; p99: number }) => ({
  count: h.count,
  p50: h.p50,
  p99: h.p99,
});

async function endAll(ctx: StepContext, tenant: Tenant, calls: TrackedCall[]): Promise<void> {
  await mapLimited(
    calls.filter((c) => c.endedAt === undefined),
    32,
    (c) => tenant.hangup(c.callId),
  );
  await waitFor(() => calls.every((c) => c.endedAt !== undefined), 20_000);
}

export async function holdStep(
  ctx: StepContext,
  opts: { phase: string; target: number; rate: number; windowSec: number; tenant?: Tenant },
): Promise<StepResult> {
  const tenant = opts.tenant ?? ctx.tenant;
  const label = `${opts.phase} ${opts.target}`;
  ctx.progress.step(label, opts.target);
  const { placed, admitted, refused } = await placeAtRate(ctx, opts.rate, opts.target, tenant);
  await waitFor(
    () => admitted.every((c) => c.answeredAt !== undefined || c.endedAt !== undefined),
    20_000,
  );
  await sleep(1000); // the last calls' first RTCP and agent start settle
  const close = await openWindow(ctx);
  await ctx.progress.sleep(opts.windowSec * 1000);
  const w = await close();
  await endAll(ctx, tenant, admitted);
  const media = await mediaFromRecords(tenant, admitted);
  const concurrent = admitted.filter((c) => c.answeredAt !== undefined).length;
  return summarize(
    ctx,
    {
      phase: opts.phase,
      label,
      concurrent,
      ratePerSec: opts.rate,
      placed,
      sustainedCps: NaN,
      perCallOf: concurrent,
    },
    admitted,
    refused,
    w,
    media,
  );
}

export async function churnStep(
  ctx: StepContext,
  opts: { phase: string; rate: number; holdSec: number; seconds: number },
): Promise<StepResult> {
  const label = `${opts.phase} ${opts.rate}/s`;
  const expectedLive = Math.round(opts.rate * opts.holdSec);
  ctx.progress.step(label, expectedLive);
  const timers = new Set<NodeJS.Timeout>();
  const count = Math.round(opts.rate * opts.seconds);
  const placing = placeAtRate(ctx, opts.rate, count, ctx.tenant, (call) => {
    const t = setTimeout(() => {
      timers.delete(t);
      void ctx.tenant.hangup(call.callId);
    }, opts.holdSec * 1000);
    timers.add(t);
  });
  // The window: from one hold time in (steady state) to the end of placing.
  const warm = Math.min(opts.holdSec + 1, opts.seconds / 3);
  await sleep(warm * 1000);
  const windowStart = Date.now();
  const close = await openWindow(ctx);
  const live: number[] = [];
  const sampler = setInterval(() => {
    live.push(ctx.gw.tracker.live().filter((c) => c.answeredAt !== undefined).length);
  }, 500);
  const { placed, admitted, refused } = await placing;
  clearInterval(sampler);
  const w = await close();
  const windowEnd = Date.now();
  await waitFor(() => timers.size === 0, opts.holdSec * 1000 + 2000);
  await endAll(ctx, ctx.tenant, admitted);
  const media = await mediaFromRecords(ctx.tenant, admitted);
  const inWindow = admitted.filter(
    (c) => c.answeredAt !== undefined && c.answeredAt >= windowStart && c.answeredAt <= windowEnd,
  ).length;
  const concurrent = live.length ? live.reduce((a, b) => a + b, 0) / live.length : 0;
  return summarize(
    ctx,
    {
      phase: opts.phase,
      label,
      concurrent: round(concurrent, 1),
      ratePerSec: opts.rate,
      placed,
      sustainedCps: round(inWindow / ((windowEnd - windowStart) / 1000), 2),
      perCallOf: inWindow,
    },
    admitted,
    refused,
    w,
    media,
  );
}
