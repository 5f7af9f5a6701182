// The runner's flags, their defaults (a full run fits in ~10 minutes on a
// 2-core machine) and the --quick / --smoke presets.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { QualityLimits } from './steps.js';

export interface LoadOptions {
  /** Concurrency ramp steps; the ramp stops at the first step that breaks a limit. */
  ramp: number[];
  /** Measurements per ramp step (medians are reported). */
  repeats: number;
  /** Calls per second while filling a concurrency step. */
  fillRate: number;
  windowSec: number;
  /** Call-rate ramp (calls/s) at half the largest passing concurrency. */
  rates: number[];
  rateSeconds: number;
  /** How long each rate-ramp call is held; 0: half the passing concurrency / the rate. */
  rateHoldSec: number;
  /** Overload: plan limit = this fraction of the largest passing concurrency; 150 % is placed. */
  overloadCapFraction: number;
  overloadFactor: number;
  soakSeconds: number;
  /** Every N-th call goes to the RTP probe (spacing, added latencies). */
  probeEvery: number;
  /** The whole run stops by itself after this many seconds. */
  maxSeconds: number;
  limits: QualityLimits;
  /** Daemon RTP ports and far-end (SIPp, probe) RTP ports: outside 32768-60999. */
  rtpMin: number;
  rtpMax: number;
  farRtpMin: number;
  farRtpMax: number;
  out: string;
  /** Profile the daemon's CPU into this directory (`<pid>.cpuprofile`); '' for no profile. */
  daemonCpuProfDir: string;
  phases: Set<string>;
  mode: 'full' | 'quick' | 'smoke';
}

const HELP = `npm run load -- [options]

  --quick                ~1-2 min: ramp 10,25,50, short windows
  --smoke                ≤ 40 s: a few calls per phase (the smoke test)
  --ramp 25,50,100,200,300,400   concurrency steps
  --repeats 2            measurements per ramp step (median reported)
  --fill-rate 25         calls/s while filling a step
  --window 8             seconds measured per step
  --rates 5,10,20,40     call-rate ramp (calls/s) at half the passing concurrency
  --rate-seconds 12      seconds per rate step
  --rate-hold 0          seconds each rate-step call is held (short calls: 3);
                         0: half the passing concurrency / the rate
  --overload-cap 0.5     plan limit as a fraction of the passing concurrency
  --soak 45              soak seconds
  --probe-every 10       every N-th call goes to the RTP probe
  --phases baseline,ramp,rate,overload,soak
  --max-seconds 660      hard bound on the whole run
  --loss 0.1 --spacing 2 --loop 10 --cpu 80   quality limits (%, ms, ms, % of a core)
  --api-p99 100          initiate-call p99 limit on the call-rate ramp, ms
  --rtp 61000-63999      daemon RTP range   --far-rtp 20000-29999  SIPp/probe RTP
  --out sip-test/load/reports/gateway-load   report path prefix (.json, .svg)
  --daemon-cpu-prof /tmp/prof   write the daemon's CPU profile there (<pid>.cpuprofile)
`;

function list(s: string): number[] {
  return s
    .split(',')
    .map(Number)
    .filter((n) => Number.isFinite(n) && n > 0);
}

function range(s: string): [number, number] {
  const [a, b] = s.split('-').map(Number);
  if (!a || !b || b <= a) throw new Error(`bad port range ${s}`);
  for (const p of [a, b])
    if (p >= 32768 && p <= 60999) throw new Error(`${s} overlaps the ephemeral range 32768-60999`);
  return [a, b];
}

export function parseOptions(argv: string[]): LoadOptions {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      help: { type: 'boolean' },
      quick: { type: 'boolean' },
      smoke: { type: 'boolean' },
      ramp: { type: 'string' },
      repeats: { type: 'string' },
      'fill-rate': { type: 'string' },
      window: { type: 'string' },
      rates: { type: 'string' },
      'rate-seconds': { type: 'string' },
      'rate-hold': { type: 'string' },
      'overload-cap': { type: 'string' },
      soak: { type: 'string' },
      'probe-every': { type: 'string' },
      phases: { type: 'string' },
      'max-seconds': { type: 'string' },
      loss: { type: 'string' },
      spacing: { type: 'string' },
      loop: { type: 'string' },
      cpu: { type: 'string' },
      'api-p99': { type: 'string' },
      rtp: { type: 'string' },
      'far-rtp': { type: 'string' },
      out: { type: 'string' },
      'daemon-cpu-prof': { type: 'string' },
    },
  });
  if (v.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const mode = v.smoke ? 'smoke' : v.quick ? 'quick' : 'full';
  const preset = {
    full: {
      ramp: '25,50,100,200,300,400',
      repeats: 2,
      window: 8,
      rates: '5,10,20,40',
      rs: 12,
      soak: 45,
      max: 660,
    },
    quick: { ramp: '10,25,50', repeats: 1, window: 5, rates: '5,10', rs: 8, soak: 10, max: 150 },
    smoke: { ramp: '3', repeats: 1, window: 2, rates: '3', rs: 3, soak: 3, max: 40 },
  }[mode];
  const num = (s: string | undefined, d: number) => (s === undefined ? d : Number(s));
  const [rtpMin, rtpMax] = range(v.rtp ?? '61000-63999');
  const [farRtpMin, farRtpMax] = range(v['far-rtp'] ?? '20000-29999');
  return {
    ramp: list(v.ramp ?? preset.ramp),
    repeats: num(v.repeats, preset.repeats),
    fillRate: num(v['fill-rate'], mode === 'smoke' ? 10 : 25),
    windowSec: num(v.window, preset.window),
    rates: list(v.rates ?? preset.rates),
    rateSeconds: num(v['rate-seconds'], preset.rs),
    rateHoldSec: num(v['rate-hold'], 0),
    overloadCapFraction: num(v['overload-cap'], 0.5),
    overloadFactor: 1.5,
    soakSeconds: num(v.soak, preset.soak),
    probeEvery: num(v['probe-every'], mode === 'smoke' ? 2 : 10),
    maxSeconds: num(v['max-seconds'], preset.max),
    limits: {
      lossPct: num(v.loss, 0.1),
      spacingP99Ms: num(v.spacing, 2),
      loopP99Ms: num(v.loop, 10),
      cpuPct: num(v.cpu, 80),
      apiP99Ms: num(v['api-p99'], 100),
    },
    rtpMin,
    rtpMax,
    farRtpMin,
    farRtpMax,
    out: v.out ?? `sip-test/load/reports/gateway-load${mode === 'full' ? '' : `-${mode}`}`,
    daemonCpuProfDir: v['daemon-cpu-prof'] ? resolve(v['daemon-cpu-prof']) : '',
    phases: new Set(
      (
        v.phases ?? (mode === 'smoke' ? 'baseline,ramp,soak' : 'baseline,ramp,rate,overload,soak')
      ).split(','),
    ),
    mode,
  };
}
