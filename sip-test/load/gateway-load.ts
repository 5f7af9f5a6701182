// Load run of the whole gateway: the daemon (`npm start`, own SQLite, RTP
// range outside the ephemeral ports), SIPp as the far end (answers, echoes
// RTP, waits for our BYE), a stamp-reading echo agent and an RTP probe in
// their own processes, calls placed through the HTTP API.
//
//   npm run load -- [--quick | --smoke] [options]   (--help for the list)
//
// Every step reports the daemon's own figures from its /metrics (added
// latency each way in the agent bridge, the pacing schedule's send spacing,
// event-loop delay) beside the external ones measured by the probe and the
// stamping agent, which include those processes' scheduling.
//
// Phases: one call (baseline), a concurrency ramp until a quality limit
// breaks, a call-rate ramp at half the passing concurrency, a 150 % overload
// against a plan limit, and a soak that must return to idle. Writes
// <out>.json and <out>.svg; bounded by --max-seconds; kills only what it started.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type ChildHandle } from './gateway-load/child-role.js';
import { cpuProfileEnv } from './gateway-load/cpu-profile.js';
import { startFarEnd, type FarEnd } from './gateway-load/far-end.js';
import {
  limitedCompanyKey,
  startGateway,
  Tenant,
  type Gateway,
} from './gateway-load/gateway-client.js';
import { exposedMetricNames, openWindow } from './gateway-load/measure.js';
import { parseOptions } from './gateway-load/options.js';
import { Progress } from './gateway-load/progress.js';
import { chartPointOf, renderChart } from './gateway-load/report-chart.js';
import {
  fdCount,
  rssKb,
  tcpConnectionsOnPort,
  udpSocketsInRange,
} from './gateway-load/proc-stats.js';
import { median, round } from './gateway-load/stats.js';
import {
  medianOf,
  printComponents,
  printTable,
  rateStepBreaks,
  summarizeRepeats,
  type StepSummary,
} from './gateway-load/step-summary.js';
import { churnStep, holdStep, type StepContext, type StepResult } from './gateway-load/steps.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const started = new Date();
  const deadline = performance.now() + o.maxSeconds * 1000;
  let agent: ChildHandle | undefined;
  let farEnd: FarEnd | undefined;
  let gw: Gateway | undefined;
  let progress: Progress | undefined;
  let cleaned = false;
  const cleanup = async (): Promise<void> => {
    if (cleaned) return;
    cleaned = true;
    progress?.stop();
    farEnd?.stop();
    agent?.kill();
    if (gw) {
      const stopped = gw.daemon.stop('SIGTERM');
      const late = await Promise.race([stopped.then(() => false), sleep(8000).then(() => true)]);
      if (late) await gw.daemon.stop('SIGKILL');
    }
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => void cleanup().then(() => process.exit(130)));
  }
  // The hard bound: whatever is still running 30 s past the budget is stopped.
  setTimeout(
    () => {
      console.error(`gateway-load: over the ${o.maxSeconds} s budget; stopping`);
      void cleanup().then(() => process.exit(3));
    },
    (o.maxSeconds + 30) * 1000,
  ).unref();

  // The machine is shared: its 1-minute load average every 10 s goes into the report.
  const loadSamples: number[] = [];
  const loadSampler = setInterval(() => loadSamples.push(loadavg()[0]!), 10_000);
  loadSampler.unref();
  const report: Record<string, unknown> = {
    kind: 'gateway-load',
    mode: o.mode,
    startedAt: started.toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      loadavgAtStart: loadavg(),
      shared: true,
      note: 'other engineers ran tests on the same 2 cores during this run; load generators (SIPp, agent, probe, this runner) share the cores too',
    },
    options: { ...o, phases: [...o.phases] },
  };
  try {
    agent = startChild(resolve(HERE, 'gateway-load/stamp-agent.ts'), []);
    const agentPort = Number((await agent.ready).port);
    farEnd = await startFarEnd({
      timeoutSec: o.maxSeconds + 60,
      farRtpMin: o.farRtpMin,
      farRtpMax: o.farRtpMax,
    });
    (report.machine as Record<string, unknown>).probeNice = farEnd.probeNice;
    (report.machine as Record<string, unknown>).probeRealtime = farEnd.probeRealtime;
    const dir = mkdtempSync(join(tmpdir(), 'gw-load-'));
    const apiKey = `load-${randomBytes(12).toString('hex')}`;
    gw = await startGateway({
      GATEWAY_DB_PATH: join(dir, 'gateway.sqlite'),
      GATEWAY_BOOTSTRAP_API_KEY: apiKey,
      GATEWAY_RTP_PORT_MIN: String(o.rtpMin),
      GATEWAY_RTP_PORT_MAX: String(o.rtpMax),
      GATEWAY_SIP_OPTIONS_PING_SECONDS: '0',
      GATEWAY_RATE_LIMIT_MAX: '1000000',
      GATEWAY_LOG_LEVEL: 'info',
      ...(o.daemonCpuProfDir ? cpuProfileEnv(o.daemonCpuProfDir) : {}),
    });
    const tenant = await Tenant.create(
      gw,
      apiKey,
      `ws://127.0.0.1:${agentPort}/`,
      farEnd.echoSipPort,
      farEnd.probeSipPort,
      0,
    );
    progress = new Progress(gw.tracker, deadline);
    const bridgeFile = resolve(HERE, '../../src/agent-bridge/agent-bridge.ts');
    const mainText = readFileSync(resolve(HERE, '../../src/main.ts'), 'utf8');
    report.bridge = {
      fileExists: existsSync(bridgeFile),
      wiredInMain: /agent-bridge/.test(mainText),
    };
    report.daemon = {
      pid: gw.daemon.pid,
      rtpRange: [o.rtpMin, o.rtpMax],
      metrics: await exposedMetricNames(gw),
      // A profiled daemon spends more CPU: its figures are not comparable.
      cpuProfileDir: o.daemonCpuProfDir || null,
    };

    const pid = gw.daemon.pid;
    const ctx: StepContext = {
      gw,
      tenant,
      probe: farEnd.probe,
      agent,
      rtpRange: [o.rtpMin, o.rtpMax],
      generatorPids: () => [agent!.pid, ...farEnd!.pids(), process.pid],
      progress,
      probeEvery: o.probeEvery,
      limits: o.limits,
      idleCpuPct: 0,
      idleRssKb: 0,
      idleFds: 0,
    };
    // Warm-up call (JIT, first-use allocations), then the idle figures.
    if (o.mode !== 'smoke') {
      await holdStep(ctx, { phase: 'warm-up', target: 1, rate: 1, windowSec: 1 });
      await sleep(1000);
    }
    progress.step('idle', 0);
    const idleClose = await openWindow(ctx);
    await progress.sleep(o.mode === 'smoke' ? 1500 : 3000);
    const idle = await idleClose();
    const httpPort = Number(new URL(gw.daemon.baseUrl).port);
    const idleHttpConnections = tcpConnectionsOnPort(pid, httpPort);
    ctx.idleCpuPct = idle.cpuPct;
    ctx.idleRssKb = idle.rssKb;
    ctx.idleFds = idle.fds;
    report.idle = {
      cpuPct: round(idle.cpuPct, 2),
      rssKb: idle.rssKb,
      fds: idle.fds,
      httpConnections: idleHttpConnections,
      rtpSockets: idle.rtpSockets,
      loopP99Ms: round(idle.loopP99Ms, 2),
    };
    const timeLeft = () => progress!.timeLeftMs / 1000;

    if (o.phases.has('baseline')) {
      const reps: StepResult[] = [];
      for (let i = 0; i < o.repeats && timeLeft() > o.windowSec + 5; i++)
        reps.push(
          await holdStep(ctx, { phase: 'one call', target: 1, rate: 1, windowSec: o.windowSec }),
        );
      if (reps.length) report.baseline = { summary: summarizeRepeats(reps, o), steps: reps };
    }

    const ramp: { summary: StepSummary; steps: StepResult[] }[] = [];
    let largestPassing = 0;
    let largestPassingExceptSpacing = 0;
    let largestPassingWithDaemonSpacing = 0;
    let daemonSpacingBroken = false;
    let limit: { brokenAt: number; why: string[] } | undefined;
    if (o.phases.has('ramp')) {
      for (const target of o.ramp) {
        const need = target / o.fillRate + o.windowSec + 3;
        if (timeLeft() < need + 2) break;
        const reps: StepResult[] = [];
        for (let i = 0; i < o.repeats && timeLeft() > need + 10; i++)
          reps.push(
            await holdStep(ctx, {
              phase: 'ramp',
              target,
              rate: o.fillRate,
              windowSec: o.windowSec,
            }),
          );
        const summary = summarizeRepeats(reps, o);
        ramp.push({ summary, steps: reps });
        // Past a spacing-only break the ramp goes on (the trend of the other
        // figures); any other break ends it.
        const onlySpacing = summary.broken.every((b) => b.startsWith('send spacing'));
        if (summary.broken.length && !limit) limit = { brokenAt: target, why: summary.broken };
        if (!limit) largestPassing = target;
        if (summary.brokenWithDaemonSpacing.length) daemonSpacingBroken = true;
        if (!daemonSpacingBroken) largestPassingWithDaemonSpacing = target;
        if (summary.broken.length && !onlySpacing) break;
        if (!summary.broken.length || onlySpacing) largestPassingExceptSpacing = target;
      }
      report.concurrencyRamp = ramp;
    }
    // The rate ramp and the overload run at half the concurrency that held the
    // limits other than the externally measured send spacing (see the report).
    const held = largestPassingExceptSpacing || largestPassing || o.ramp[0]!;
    const half = Math.max(1, Math.floor(held / 2));

    const rateSteps: { summary: StepSummary; steps: StepResult[] }[] = [];
    let sustained = 0;
    let sustainedButSpacing = 0;
    let rateBroken = false;
    if (o.phases.has('rate')) {
      for (const rate of o.rates) {
        const holdSec = o.rateHoldSec > 0 ? o.rateHoldSec : half / rate;
        const seconds = Math.max(o.rateSeconds, 2 * holdSec + 3);
        if (timeLeft() < seconds + holdSec + 8) break;
        const r = await churnStep(ctx, { phase: 'rate', rate, holdSec, seconds });
        const summary = summarizeRepeats([r], o);
        summary.broken.push(...rateStepBreaks(r, summary, rate, o.limits));
        rateSteps.push({ summary, steps: [r] });
        // As in the concurrency ramp, a break by the external send spacing alone does not end it.
        const onlySpacing = summary.broken.every((b) => b.startsWith('send spacing'));
        if (summary.broken.length) rateBroken = true;
        if (!rateBroken) sustained = Math.max(sustained, r.sustainedCps);
        if (summary.broken.length && !onlySpacing) break;
        sustainedButSpacing = Math.max(sustainedButSpacing, r.sustainedCps);
      }
      report.rateRamp = { concurrent: half, holdSec: o.rateHoldSec || null, steps: rateSteps };
    }

    if (o.phases.has('overload') && timeLeft() > o.windowSec + 40) {
      const cap = Math.max(1, Math.round(held * o.overloadCapFraction));
      const key = await limitedCompanyKey(gw.daemon.dbPath, cap);
      const limited = await Tenant.create(
        gw,
        key,
        `ws://127.0.0.1:${agentPort}/`,
        farEnd.echoSipPort,
        farEnd.probeSipPort,
        500_000,
      );
      const target = Math.ceil(cap * o.overloadFactor);
      const r = await holdStep(ctx, {
        phase: 'overload',
        target,
        rate: o.fillRate,
        windowSec: o.windowSec,
        tenant: limited,
      });
      const summary = summarizeRepeats([r], o);
      const refused = Object.entries(r.refusedByStatus);
      const clean = refused.every(([s]) => s === '402' || s === '429');
      const refusedCount = refused.reduce((a, [, n]) => a + n, 0);
      if (r.admitted > cap) summary.broken.push(`${r.admitted} admitted > plan limit ${cap}`);
      if (!clean) summary.broken.push(`refusals not 402/429: ${JSON.stringify(r.refusedByStatus)}`);
      if (r.admitted + refusedCount !== target) summary.broken.push('requests unaccounted for');
      report.overload = {
        planLimit: cap,
        placed: target,
        admitted: r.admitted,
        refused: r.refusedByStatus,
        refusedCleanly: clean,
        summary,
        step: r,
      };
    }

    if (o.phases.has('soak') && timeLeft() > o.soakSeconds + 8) {
      const rate = Math.min(10, Math.max(1, half / 2));
      const holdSec = half / rate;
      const r = await churnStep(ctx, { phase: 'soak', rate, holdSec, seconds: o.soakSeconds });
      // Calls end and ports close within a few seconds. This runner's own
      // HTTP keep-alive connections (fetch's pool, kept open for the server's
      // Keep-Alive: timeout=72) are counted apart: they are the client's, not a leak.
      const { tracker } = gw;
      const agentRole = agent;
      const measureAfter = async () => ({
        liveCalls: tracker.live().length,
        rtpSockets: udpSocketsInRange(pid, o.rtpMin, o.rtpMax),
        httpConnections: tcpConnectionsOnPort(pid, httpPort),
        fds: fdCount(pid),
        rssKb: rssKb(pid),
        agentOpenSockets: (await agentRole.request<{ open: number }>('stats')).open,
      });
      await sleep(1000);
      let after = await measureAfter();
      const daemonFds = (a: typeof after): number => a.fds - a.httpConnections;
      const idleDaemonFds = idle.fds - idleHttpConnections;
      for (
        let waited = 1000;
        waited < 7000 && daemonFds(after) > idleDaemonFds + 2;
        waited += 500
      ) {
        await sleep(500);
        after = await measureAfter();
      }
      const backToIdle =
        after.liveCalls === 0 &&
        after.rtpSockets === idle.rtpSockets &&
        daemonFds(after) <= idleDaemonFds + 2 &&
        after.agentOpenSockets === 0;
      report.soak = {
        summary: summarizeRepeats([r], o),
        step: r,
        idleBefore: report.idle,
        after,
        backToIdle,
      };
    }

    const rampRows = ramp.map((s) => s.summary);
    const passing = rampRows.filter((s) => s.broken.length === 0);
    const atLimit = passing[passing.length - 1];
    const withAgent = [...rampRows, ...rateSteps.map((s) => s.summary)].filter(
      (s) => s.rtpToAgentP99Ms > 0,
    );
    const cpuPerCall = passing
      .filter((s) => s.concurrent >= 10)
      .map((s) => s.cpuPctPerCall as number);
    report.summary = {
      largestConcurrencyHoldingEveryLimit: largestPassing,
      largestConcurrencyHoldingEveryLimitButSpacing: largestPassingExceptSpacing,
      largestConcurrencyHoldingEveryLimitWithInDaemonSpacing: largestPassingWithDaemonSpacing,
      limitBrokenAt: limit?.brokenAt ?? null,
      limitBrokenBy: limit?.why ?? [],
      callsPerSecondSustained: sustained,
      callsPerSecondSustainedButSpacing: sustainedButSpacing,
      // Where the daemon's time went at the highest rate held, and at the first that broke.
      componentsAtHighestRateHeld: rateAt(rateSteps, sustained),
      componentsAtFirstRateBroken:
        rateSteps.find((s) => s.summary.broken.length > 0)?.summary.components ?? null,
      daemonCpuPctPerCallAtLargestPassing: atLimit?.cpuPctPerCall ?? null,
      daemonCpuPctPerCallAboveIdleAtLargestPassing: atLimit?.cpuPctPerCallAboveIdle ?? null,
      daemonCpuPctPerCallMedianOverPassingSteps: cpuPerCall.length
        ? round(median(cpuPerCall), 4)
        : null,
      callsPerCoreAtLargestPassing: atLimit
        ? round(100 / (atLimit.cpuPctPerCall as number), 0)
        : null,
      agentBridged: withAgent.length > 0,
      // Added latencies measured inside the daemon (its /metrics), medians over the steps.
      inDaemon: {
        rtpToWsP50Ms: medianOf(withAgent, 'daemonRtpToWsP50Ms'),
        rtpToWsP99Ms: medianOf(withAgent, 'daemonRtpToWsP99Ms'),
        wsToRtpP50Ms: medianOf(withAgent, 'daemonWsToRtpP50Ms'),
        wsToRtpP99Ms: medianOf(withAgent, 'daemonWsToRtpP99Ms'),
        // agent audio that found its call's queue empty, until its frame left
        agentAudioWaitP99Ms: medianOf(withAgent, 'daemonAudioWaitP99Ms'),
        sendSpacingP99Ms: medianOf(rampRows, 'daemonSpacingP99Ms'),
      },
      // Measured outside the daemon (RTP probe, stamping agent): includes their scheduling.
      external: {
        rtpToAgentP99Ms: medianOf(withAgent, 'rtpToAgentP99Ms'),
        agentToRtpP99Ms: medianOf(withAgent, 'agentToRtpP99Ms'),
        sendSpacingP99Ms: medianOf(rampRows, 'spacingP99Ms'),
      },
      overloadRefusedCleanly:
        (report.overload as { refusedCleanly?: boolean } | undefined)?.refusedCleanly ?? null,
      soakBackToIdle: (report.soak as { backToIdle?: boolean } | undefined)?.backToIdle ?? null,
      goals: { cpuPctPerCall: 0.4, rtpToWsP99Ms: 5, wsToRtpP99Ms: 25 },
    };
    progress.stop();
    const base = report.baseline as { summary: StepSummary } | undefined;
    printTable('per step (medians over repeats)', [
      ...(base ? [base.summary] : []),
      ...rampRows,
      ...rateSteps.map((s) => s.summary),
      ...(report.overload ? [(report.overload as { summary: StepSummary }).summary] : []),
      ...(report.soak ? [(report.soak as { summary: StepSummary }).summary] : []),
    ]);
    printComponents('where the daemon spent it, per step (medians over repeats)', [
      ...(base ? [base.summary] : []),
      ...rampRows,
      ...rateSteps.map((s) => s.summary),
    ]);
    console.log(`\nsummary ${JSON.stringify(report.summary, null, 2)}`);
    // A rate run (no concurrency ramp) is drawn at each step's mean concurrency.
    const charted = rampRows.length ? rampRows : rateSteps.map((s) => s.summary);
    const chartPoints = [...(base ? [base.summary] : []), ...charted].map(chartPointOf);
    report.finishedAt = new Date().toISOString();
    clearInterval(loadSampler);
    Object.assign(report.machine as Record<string, unknown>, {
      loadavgAtEnd: loadavg(),
      loadavg1mEvery10s: loadSamples.map((l) => round(l, 2)),
      loadavg1mMedian: loadSamples.length ? round(median(loadSamples), 2) : null,
    });
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(`${o.out}.json`, JSON.stringify(report, null, 2) + '\n');
    writeFileSync(
      `${o.out}.svg`,
      renderChart(
        chartPoints,
        o.limits,
        `gateway-load ${o.mode} ${report.finishedAt as string} — shared 2-core machine; ${
          rampRows.length
            ? `medians of ${o.repeats} repeat(s)`
            : `call-rate steps (one run each) at their mean concurrency`
        }`,
      ),
    );
    console.log(`report: ${o.out}.json, ${o.out}.svg`);
  } finally {
    await cleanup();
  }
}

/** The components of the rate step whose sustained rate is `cps` (the highest held), if any. */
function rateAt(steps: { summary: StepSummary; steps: StepResult[] }[], cps: number) {
  if (cps <= 0) return null;
  return steps.find((s) => s.steps[0]?.sustainedCps === cps)?.summary.components ?? null;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('gateway-load failed:', err);
    process.exit(1);
  },
);
