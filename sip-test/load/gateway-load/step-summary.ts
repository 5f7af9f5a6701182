// A step of the load run summarised over its repeats: the medians of its
// figures, the quality limits it broke, and the console table of the steps.
import type { LoadOptions } from './options.js';
import { median, round } from './stats.js';
import type { ComponentFigures, QualityLimits, StepResult } from './steps.js';

/** The figures compared across repeats of a step (medians reported). */
const FIGURES = [
  'cpuPct',
  'cpuPctPerCall',
  'cpuPctPerCallAboveIdle',
  'generatorsCpuPct',
  'machineBusyPct',
  'rssKbPerCall',
  'fdsPerCall',
  'loopP99Ms',
  'spacingP50Ms',
  'spacingP99Ms',
  'daemonSpacingP50Ms',
  'daemonSpacingP99Ms',
  'pacingSkippedTicks',
  'rtpOutRatio',
  'rtpInRatio',
  'lossPct',
  'sustainedCps',
] as const;

export interface StepSummary {
  label: string;
  concurrent: number;
  ratePerSec: number;
  placed: number;
  answered: number;
  failed: number;
  refusedByStatus: Record<string, number>;
  apiP50Ms: number;
  apiP99Ms: number;
  inviteTo200P50Ms: number;
  inviteTo200P99Ms: number;
  requestToInviteP50Ms: number;
  requestToInviteP99Ms: number;
  rtpToAgentP50Ms: number;
  rtpToAgentP99Ms: number;
  agentToRtpP50Ms: number;
  agentToRtpP99Ms: number;
  daemonRtpToWsP50Ms: number;
  daemonRtpToWsP99Ms: number;
  daemonWsToRtpP50Ms: number;
  daemonWsToRtpP99Ms: number;
  /** Agent audio into an empty queue until its frame left: the pacing's share of agent → RTP. */
  daemonAudioWaitP50Ms: number;
  daemonAudioWaitP99Ms: number;
  agentStreams: number;
  probeFlows: number;
  broken: string[];
  /** What `broken` would say with the spacing limit checked on the daemon's own spacing. */
  brokenWithDaemonSpacing: string[];
  /** The per-component breakdown, each figure the median over the repeats. */
  components: ComponentFigures;
  [figure: string]: unknown;
}

/** Each component figure's median over the repeats (per thread, over the repeats that have the thread). */
function medianComponents(reps: StepResult[]): ComponentFigures {
  const first = reps[0]!.components;
  const out = { ...first, cpuPctByThread: {}, cpuMsPerCallByThread: {} } as ComponentFigures;
  const numeric = Object.keys(first).filter(
    (k) => typeof first[k as keyof ComponentFigures] === 'number',
  ) as (keyof ComponentFigures)[];
  const med = (xs: number[]) => {
    const finite = xs.filter(Number.isFinite);
    return finite.length ? round(median(finite), 4) : NaN;
  };
  for (const k of numeric) {
    (out as unknown as Record<string, number>)[k] = med(reps.map((r) => r.components[k] as number));
  }
  for (const key of ['cpuPctByThread', 'cpuMsPerCallByThread'] as const) {
    const threads = new Set(reps.flatMap((r) => Object.keys(r.components[key])));
    for (const t of threads) {
      out[key][t] = med(reps.map((r) => r.components[key][t] ?? NaN));
    }
  }
  return out;
}

/** Medians over the repeats of one step; the step breaks when its medians break a limit. */
export function summarizeRepeats(reps: StepResult[], o: LoadOptions): StepSummary {
  const med = (f: (r: StepResult) => number): number =>
    round(median(reps.map(f).filter(Number.isFinite)), 4);
  const s: StepSummary = {
    label: reps[0]!.label,
    concurrent: med((r) => r.concurrent),
    ratePerSec: reps[0]!.ratePerSec,
    placed: med((r) => r.placed),
    answered: med((r) => r.answered),
    failed: Math.max(...reps.map((r) => r.failed)),
    refusedByStatus: reps[0]!.refusedByStatus,
    apiP50Ms: med((r) => r.apiMs.p50),
    apiP99Ms: med((r) => r.apiMs.p99),
    inviteTo200P50Ms: med((r) => r.inviteTo200Ms.p50),
    inviteTo200P99Ms: med((r) => r.inviteTo200Ms.p99),
    requestToInviteP50Ms: med((r) => r.requestToInviteMs.p50),
    requestToInviteP99Ms: med((r) => r.requestToInviteMs.p99),
    rtpToAgentP50Ms: med((r) => r.rtpToAgentMs.p50),
    rtpToAgentP99Ms: med((r) => r.rtpToAgentMs.p99),
    agentToRtpP50Ms: med((r) => r.agentToRtpMs.p50),
    agentToRtpP99Ms: med((r) => r.agentToRtpMs.p99),
    daemonRtpToWsP50Ms: med((r) => r.daemonRtpToWsMs.p50),
    daemonRtpToWsP99Ms: med((r) => r.daemonRtpToWsMs.p99),
    daemonWsToRtpP50Ms: med((r) => r.daemonWsToRtpMs.p50),
    daemonWsToRtpP99Ms: med((r) => r.daemonWsToRtpMs.p99),
    daemonAudioWaitP50Ms: med((r) => r.daemonAgentAudioWaitMs.p50),
    daemonAudioWaitP99Ms: med((r) => r.daemonAgentAudioWaitMs.p99),
    agentStreams: med((r) => r.agentStreams),
    probeFlows: med((r) => r.probeFlows),
    broken: [],
    brokenWithDaemonSpacing: [],
    components: medianComponents(reps),
    repeats: reps.length,
  };
  for (const f of FIGURES) s[f] = med((r) => r[f]);
  const L = o.limits;
  const v = (k: string) => s[k] as number;
  if (s.failed > 0) s.broken.push(`${s.failed} admitted calls not answered`);
  if (v('lossPct') > L.lossPct) s.broken.push(`loss ${v('lossPct')} % > ${L.lossPct} %`);
  if (v('spacingP99Ms') > L.spacingP99Ms)
    s.broken.push(`send spacing p99 ${v('spacingP99Ms')} ms > ${L.spacingP99Ms} ms`);
  if (v('loopP99Ms') > L.loopP99Ms)
    s.broken.push(`event-loop p99 ${v('loopP99Ms')} ms > ${L.loopP99Ms} ms`);
  if (v('cpuPct') > L.cpuPct) s.broken.push(`daemon CPU ${v('cpuPct')} % > ${L.cpuPct} %`);
  s.brokenWithDaemonSpacing = s.broken.filter((b) => !b.startsWith('send spacing'));
  if (v('daemonSpacingP99Ms') > L.spacingP99Ms)
    s.brokenWithDaemonSpacing.push(
      `in-daemon send spacing p99 ${v('daemonSpacingP99Ms')} ms > ${L.spacingP99Ms} ms`,
    );
  return s;
}

/**
 * What else breaks a step of the call-rate ramp (issue 28): fewer calls
 * placed than 90 % of the rate asked, or an initiate-call p99 over its limit.
 */
export function rateStepBreaks(
  step: Pick<StepResult, 'sustainedCps'>,
  summary: Pick<StepSummary, 'apiP99Ms'>,
  rate: number,
  limits: Pick<QualityLimits, 'apiP99Ms'>,
): string[] {
  const broken: string[] = [];
  if (step.sustainedCps < 0.9 * rate)
    broken.push(`sustained ${step.sustainedCps}/s < 90 % of ${rate}/s`);
  if (summary.apiP99Ms > limits.apiP99Ms)
    broken.push(`initiate-call p99 ${summary.apiP99Ms} ms > ${limits.apiP99Ms} ms`);
  return broken;
}

/** Median of one figure over steps, null when none has it. */
export function medianOf(rows: StepSummary[], key: string): number | null {
  const xs = rows
    .map((r) => r[key])
    .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return xs.length ? round(median(xs), 3) : null;
}

export function printTable(title: string, rows: StepSummary[]): void {
  const head =
    'step                  conc  ans fail  cpu%  cpu%/call  loop99  spc99 dspc99  loss%  out/exp  api99  →inv50 →inv99  inv99  r→a99  a→r99  dr→w50 dr→w99 dw→r50 dw→r99 dwait99  cps';
  const n = (x: unknown, d = 1) =>
    typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '-';
  console.log(`\n${title}\n${head}`);
  for (const r of rows) {
    console.log(
      [
        r.label.padEnd(20),
        n(r.concurrent, 0).padStart(5),
        n(r.answered, 0).padStart(4),
        n(r.failed, 0).padStart(4),
        n(r.cpuPct).padStart(5),
        n(r.cpuPctPerCall, 3).padStart(10),
        n(r.loopP99Ms).padStart(7),
        n(r.spacingP99Ms, 2).padStart(6),
        n(r.daemonSpacingP99Ms, 2).padStart(6),
        n(r.lossPct, 3).padStart(6),
        n(r.rtpOutRatio, 3).padStart(8),
        n(r.apiP99Ms).padStart(6),
        n(r.requestToInviteP50Ms).padStart(6),
        n(r.requestToInviteP99Ms).padStart(6),
        n(r.inviteTo200P99Ms, 0).padStart(6),
        n(r.rtpToAgentP99Ms).padStart(6),
        n(r.agentToRtpP99Ms).padStart(6),
        n(r.daemonRtpToWsP50Ms, 2).padStart(6),
        n(r.daemonRtpToWsP99Ms, 2).padStart(6),
        n(r.daemonWsToRtpP50Ms, 2).padStart(6),
        n(r.daemonWsToRtpP99Ms, 2).padStart(6),
        n(r.daemonAudioWaitP99Ms, 1).padStart(7),
        n(r.sustainedCps).padStart(5),
        r.broken.length ? ` BROKEN: ${r.broken.join('; ')}` : '',
      ].join(' '),
    );
  }
}

/** Where the daemon's time went at each step (issue 28's breakdown). */
export function printComponents(title: string, rows: StepSummary[]): void {
  const n = (x: unknown, d = 1) =>
    typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '-';
  console.log(
    `\n${title}\nstep                  calls  wr/call wr ms/call  full/call full ms/call full50 full99  normal/call  fsync/call fsync50 fsync99  ws50  ws99  loop99 mloop99  cpu% main/media/other   ms/call main/media/other  gen%  machine%`,
  );
  for (const r of rows) {
    const c = r.components;
    const threads = (by: Record<string, number>, d: number) =>
      ['main', 'media', 'other'].map((t) => n(by[t], d)).join('/');
    console.log(
      [
        r.label.padEnd(20),
        n(c.perCallOf, 0).padStart(6),
        n(c.storeWritesPerCall).padStart(8),
        n(c.storeWriteMsPerCall, 3).padStart(10),
        n(c.fullCommitsPerCall).padStart(10),
        n(c.fullCommitMsPerCall, 2).padStart(12),
        n(c.fullCommitP50Ms, 2).padStart(6),
        n(c.fullCommitP99Ms, 2).padStart(6),
        n(c.normalCommitsPerCall).padStart(12),
        n(c.fsyncsPerCall, 2).padStart(11),
        n(c.fsyncP50Ms, 2).padStart(7),
        n(c.fsyncP99Ms, 2).padStart(7),
        n(c.agentConnectP50Ms).padStart(5),
        n(c.agentConnectP99Ms).padStart(5),
        n(r.loopP99Ms).padStart(7),
        n(c.mediaLoopP99Ms).padStart(7),
        threads(c.cpuPctByThread, 1).padStart(22),
        threads(c.cpuMsPerCallByThread, 2).padStart(22),
        n(r.generatorsCpuPct).padStart(5),
        n(r.machineBusyPct).padStart(9),
      ].join(' '),
    );
  }
}
