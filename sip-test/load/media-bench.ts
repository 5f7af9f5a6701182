// Media benchmark: N concurrent RTP sessions of ours against a UDP echo on
// loopback, and a bare UDP relay forwarding the same packet rate as the
// physical floor, each in its own process so CPU is measured per process.
//
//   npx tsx sip-test/load/media-bench.ts [--n 50,100,200,400] [--seconds 15] [--warmup 3] [--reps 3]
//                                        [--jit-warmup 15] [--pin auto|off] [--srtp]
//
// --srtp: each repetition also measures the same N sessions with SRTP
// (createSession({ srtp: 'srtp' }), AES_CM_128_HMAC_SHA1_80 both ways: the
// echo returns our SRTP, which we check and decrypt with the key we offered,
// answered back to us), plain and SRTP in alternating order, against the same
// relay measurement; a row `N srtp` follows the plain one, then a line with
// the SRTP/RTP ratio of CPU per call and the share of sent frames received.
//
// --pin: with two or more CPUs and util-linux's taskset, the measured
// processes (ours and the relay) run on the last CPU and the far ends (echo,
// generator) on the first, so both are measured in the same placement;
// otherwise the scheduler's choice (same core or not) changes the cost of
// every wake-up between the two sides and with it the ratio from run to run.
// --jit-warmup: seconds both measured processes run unmeasured at the first N
// before anything is measured (JIT compilation of the hot paths).
// Each N is measured `reps` times, ours and the relay back to back, and the
// medians are printed (the machine is shared: single runs vary by ±20 %).
// Per N it prints: our CPU % per call and its ratio to the bare relay's,
// packets sent ÷ (50 × N × seconds), send spacing p50/p99 as the echo sees
// it, clock drift (ppm, least-squares per flow), event-loop delay p99 and
// memory per call.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MediaEngine, type MediaSession } from '../../src/media/index.js';
import { SPACING_BIN_MS } from '../../src/media/pacing-clock.js';
import {
  echoRole,
  generatorRole,
  relayRole,
  type EchoResult,
  type RelayResult,
} from './media-bench/far-roles.js';
import {
  cpuWindow,
  type CpuWindow,
  FRAME_MS,
  histogramPercentile,
  type Message,
  onCommand,
  sleep,
} from './media-bench/roles-support.js';

const SELF = fileURLToPath(import.meta.url);

interface MediaResult extends CpuWindow {
  /** |send interval − 20 ms| p50 and p99 as our pacing clock achieved them. */
  sendDevP50: number;
  sendDevP99: number;
  sent: number;
  loopP99Ms: number;
  memPerCallKb: number;
  rssPerCallKb: number;
  framesReceived: number;
  /** SRTP sessions: packets that failed authentication (0 unless something is wrong). */
  authFailures: number;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

function flag(name: string): boolean {
  return process.argv.includes(`--${name}`);
}

/**
 * The echo's answer to one of our offers: PCMU and telephone-event at the
 * echo's port; with SRTP, RTP/SAVP and OUR tag-1 key as the far end's, since
 * what comes back is our own SRTP (RFC 4568: the answer's key protects what
 * the answerer sends).
 */
function echoAnswer(echoPort: number, offer: string | null): string {
  const crypto = offer?.split('\r\n').find((l) => l.startsWith('a=crypto:1 '));
  return (
    'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
    `m=audio ${echoPort} ${crypto ? 'RTP/SAVP' : 'RTP/AVP'} 0 101\r\n` +
    'a=rtpmap:101 telephone-event/8000\r\n' +
    (crypto ? `${crypto}\r\n` : '')
  );
}

// ---------- role: media (our sessions, measured) ----------

async function mediaRole(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  let engine: MediaEngine | null = null;
  let sessions: MediaSession[] = [];
  let feed: NodeJS.Timeout | undefined;
  let framesReceived = 0;
  let memPerCallKb = 0;
  let rssPerCallKb = 0;
  onCommand(async (m) => {
    if (m.cmd === 'setup') {
      const n = m.n as number;
      gc?.();
      const mem0 = process.memoryUsage();
      engine = new MediaEngine({
        bindAddress: '127.0.0.1',
        advertisedAddress: '127.0.0.1',
        rtpPortMin: 20000,
        rtpPortMax: 29999,
        inactivityTimeoutSec: 0,
      });
      const srtp = m.srtp === true;
      const onFrame = (): void => {
        framesReceived++;
      };
      sessions = [];
      for (let i = 0; i < n; i++) {
        const s = await engine.createSession(srtp ? { srtp: 'srtp' } : {});
        const offer = s.createOffer();
        s.applyAnswer(echoAnswer(m.echoPort as number, srtp ? offer : null));
        s.onAudio(onFrame);
        sessions.push(s);
      }
      // the agent side: a second of audio per call each second, as agents send ahead
      const speech = Buffer.alloc(8000, 0x55);
      feed = setInterval(() => {
        for (const s of sessions) if (s.queuedMs < 500) s.enqueue(speech);
      }, 1000);
      await sleep(m.warmupMs as number);
      gc?.();
      const mem1 = process.memoryUsage();
      memPerCallKb = (mem1.heapUsed + mem1.external - mem0.heapUsed - mem0.external) / 1024 / n;
      rssPerCallKb = (mem1.rss - mem0.rss) / 1024 / n;
      await sleep(500); // the pacing clock catches up on frames the collection delayed
      return null;
    }
    if (m.cmd === 'measure') {
      const sent0 = sessions.reduce((a, s) => a + s.counters().packetsSent, 0);
      const frames0 = framesReceived;
      engine!.sendSpacingHistogram(true);
      const stop = cpuWindow();
      await sleep(m.windowMs as number);
      const sent1 = sessions.reduce((a, s) => a + s.counters().packetsSent, 0);
      const frames1 = framesReceived; // in the CPU window, as `sent`
      const cpu = stop();
      const spacing = engine!.sendSpacingHistogram();
      // event-loop delay in a window of its own: the 1 ms probe timer would add
      // a thousand wake-ups a second to the CPU window
      const loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      await sleep(Math.min(5000, m.windowMs as number));
      loop.disable();
      const result: MediaResult = {
        ...cpu,
        sendDevP50: histogramPercentile(spacing, 0.5) * SPACING_BIN_MS,
        sendDevP99: histogramPercentile(spacing, 0.99) * SPACING_BIN_MS,
        sent: sent1 - sent0,
        loopP99Ms: loop.percentile(99) / 1e6,
        memPerCallKb,
        rssPerCallKb,
        framesReceived: frames1 - frames0,
        authFailures: sessions.reduce((a, s) => a + (s.stats().srtp?.authFailures ?? 0), 0),
      };
      return result;
    }
    clearInterval(feed);
    await engine?.close();
    engine = null;
    sessions = [];
    return null;
  });
}

// ---------- orchestration ----------

class Child {
  private waiting: ((m: Message) => void) | null = null;
  readonly ready: Promise<void>;
  private constructor(readonly proc: ChildProcess) {
    let markReady = (): void => {};
    this.ready = new Promise((r) => (markReady = r));
    proc.on('message', (m: Message) => {
      if (m.cmd === 'ready') markReady();
      else this.waiting?.(m);
    });
  }

  /** `cpus`: the CPU list the role is pinned to with taskset, or null. */
  static start(role: string, cpus: string | null): Child {
    // MEDIA_BENCH_NODE_ARGS (e.g. --cpu-prof) goes to the measured media process only
    const extra = role === 'media' ? (process.env.MEDIA_BENCH_NODE_ARGS ?? '').split(' ') : [];
    const args = [...extra.filter(Boolean), '--expose-gc', '--import', 'tsx', SELF, '--role', role];
    const [command, argv] = cpus
      ? ['taskset', ['-c', cpus, process.execPath, ...args]]
      : [process.execPath, args];
    const proc = spawn(command, argv, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Child(proc);
  }

  async ask<T>(m: Message): Promise<T> {
    await this.ready;
    return new Promise((resolve, reject) => {
      this.waiting = (reply) => {
        this.waiting = null;
        if (reply.cmd === 'error') reject(new Error(String(reply.error)));
        else resolve(reply.result as T);
      };
      this.proc.send(m);
    });
  }

  stop(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGTERM');
  }
}

interface Row {
  ours: MediaResult;
  floor: RelayResult;
  seen: EchoResult;
  ourPerCall: number;
  floorPerCall: number;
  ratio: number;
  pktRatio: number;
}

/** CPU lists for the measured roles and the far ends, or null when not pinning. */
function placement(mode: string): { measured: string; far: string } | null {
  const cpus = availableParallelism();
  if (mode === 'off' || cpus < 2) return null;
  if (spawnSync('taskset', ['-c', '0', 'true']).status !== 0) return null;
  return { measured: String(cpus - 1), far: '0' };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

interface Bench {
  echo: Child;
  media: Child;
  relay: Child;
  generator: Child;
  echoPort: number;
  sinkPort: number;
  /** Traffic before each measurement, ms. */
  warmupMs: number;
}

/** One measurement of our N sessions (plain RTP, or SRTP), `windowMs` long. */
async function measureOurs(
  n: number,
  c: Bench,
  windowMs: number,
  srtp: boolean,
): Promise<{ ours: MediaResult; seen: EchoResult }> {
  const { echoPort, warmupMs } = c;
  await c.media.ask({ cmd: 'setup', n, echoPort, warmupMs, srtp });
  await c.echo.ask({ cmd: 'record' });
  const ours = await c.media.ask<MediaResult>({ cmd: 'measure', windowMs });
  const seen = await c.echo.ask<EchoResult>({ cmd: 'report' });
  await c.media.ask({ cmd: 'teardown' });
  return { ours, seen };
}

/** The floor: the same packet rate through a bare relay, `windowMs` long. */
async function measureFloor(n: number, c: Bench, windowMs: number): Promise<RelayResult> {
  const ports = await c.relay.ask<number[]>({ cmd: 'open', n, sinkPort: c.sinkPort });
  await c.generator.ask({ cmd: 'start', ports });
  await sleep(c.warmupMs);
  const floor = await c.relay.ask<RelayResult>({ cmd: 'measure', windowMs });
  await c.generator.ask({ cmd: 'stop' });
  await c.relay.ask({ cmd: 'close' });
  return floor;
}

/**
 * One repetition at N calls: ours (plain, and SRTP with `srtp`, the two in
 * the order `srtpFirst` says) and the floor, back to back, each `windowMs` long.
 */
async function runOnce(
  n: number,
  c: Bench,
  windowMs: number,
  srtp = false,
  srtpFirst = false,
): Promise<{ plain: Row; srtp: Row | null }> {
  const secureFirst = srtp && srtpFirst ? await measureOurs(n, c, windowMs, true) : null;
  const plain = await measureOurs(n, c, windowMs, false);
  const secure = srtp && !srtpFirst ? await measureOurs(n, c, windowMs, true) : secureFirst;
  const floor = await measureFloor(n, c, windowMs);
  return {
    plain: rowOf(n, plain.ours, plain.seen, floor),
    srtp: secure ? rowOf(n, secure.ours, secure.seen, floor) : null,
  };
}

function rowOf(n: number, ours: MediaResult, seen: EchoResult, floor: RelayResult): Row {
  const ourPerCall = ours.cpuPct / n;
  const floorPerCall = floor.cpuPct / n;
  return {
    ours,
    floor,
    seen,
    ourPerCall,
    floorPerCall,
    ratio: ourPerCall / floorPerCall,
    pktRatio: ours.sent / ((1000 / FRAME_MS) * n * (ours.windowMs / 1000)),
  };
}

/** One table row: the medians over the repetitions (`label`: N, or `N srtp`). */
function formatRow(label: string, rows: Row[]): string {
  const med = (f: (r: Row) => number): number => median(rows.map(f));
  return [
    label,
    med((r) => r.ourPerCall).toFixed(3),
    med((r) => r.floorPerCall).toFixed(3),
    `${med((r) => r.ratio).toFixed(2)} (${rows.map((r) => r.ratio.toFixed(2)).join(' ')})`,
    med((r) => r.pktRatio).toFixed(4),
    `${med((r) => r.ours.sendDevP50).toFixed(2)}/${med((r) => r.ours.sendDevP99).toFixed(2)}`,
    `${med((r) => r.seen.gapP50).toFixed(2)}/${med((r) => r.seen.gapP99).toFixed(2)}`,
    med((r) => r.seen.devP99).toFixed(2),
    `${med((r) => r.seen.driftPpmMedian).toFixed(1)}/${med((r) => r.seen.driftPpmMaxAbs).toFixed(1)}`,
    med((r) => r.ours.loopP99Ms).toFixed(2),
    med((r) => r.ours.memPerCallKb).toFixed(1),
    med((r) => r.ours.rssPerCallKb).toFixed(1),
    `${med((r) => r.ours.userPct).toFixed(1)}/${med((r) => r.floor.userPct).toFixed(1)}`,
    `${med((r) => (r.ours.wakeups * 1000) / r.ours.windowMs).toFixed(0)}/${med((r) => (r.floor.wakeups * 1000) / r.floor.windowMs).toFixed(0)}`,
  ].join(' | ');
}

/** The SRTP/RTP comparison line: CPU per call, its ratio per repetition, frames received ÷ sent. */
function formatSrtpComparison(n: number, plain: Row[], srtp: Row[]): string {
  const ratios = srtp.map((r, i) => r.ourPerCall / plain[i]!.ourPerCall);
  const received = (rows: Row[]): string =>
    median(rows.map((r) => r.ours.framesReceived / r.ours.sent)).toFixed(4);
  return (
    `srtp/rtp at ${n}: cpu%/call ${median(plain.map((r) => r.ourPerCall)).toFixed(3)} → ` +
    `${median(srtp.map((r) => r.ourPerCall)).toFixed(3)}, ratio ${median(ratios).toFixed(2)} ` +
    `(${ratios.map((x) => x.toFixed(2)).join(' ')}); received/sent rtp ${received(plain)} ` +
    `srtp ${received(srtp)}; srtp auth failures ${srtp.reduce((a, r) => a + r.ours.authFailures, 0)}`
  );
}

async function main(): Promise<void> {
  const ns = arg('n', '50,100,200,400').split(',').map(Number);
  const srtp = flag('srtp');
  const windowMs = Number(arg('seconds', '15')) * 1000;
  const warmupMs = Number(arg('warmup', '3')) * 1000;
  const reps = Number(arg('reps', '3'));
  const jitWarmupMs = Number(arg('jit-warmup', '15')) * 1000;
  const pin = placement(arg('pin', 'auto'));
  console.log(
    pin
      ? `pinned: ours and the relay on CPU ${pin.measured}, echo and generator on CPU ${pin.far}`
      : 'not pinned (one CPU, no taskset, or --pin off)',
  );
  const echo = Child.start('echo', pin?.far ?? null);
  const media = Child.start('media', pin?.measured ?? null);
  const relay = Child.start('relay', pin?.measured ?? null);
  const generator = Child.start('generator', pin?.far ?? null);
  const children = [echo, media, relay, generator];
  const killAll = (): void => children.forEach((c) => c.stop());
  process.on('exit', killAll);
  try {
    const bench: Bench = {
      echo,
      media,
      relay,
      generator,
      echoPort: await echo.ask<number>({ cmd: 'port' }),
      sinkPort: await generator.ask<number>({ cmd: 'port' }),
      warmupMs,
    };
    await Promise.all([media.ready, relay.ready]);
    console.log(
      [
        'N',
        'cpu%/call',
        'relay%/call',
        'ratio',
        'pkts',
        'send |gap-20| p50/p99',
        'arrival gap p50/p99',
        'arrival |gap-20| p99',
        'drift ppm (med/max)',
        'loop p99',
        'heap+ext KB/call',
        'rss KB/call',
        'user% ours/relay',
        'ctx switches/s ours/relay',
      ].join(' | '),
    );
    if (jitWarmupMs > 0) {
      // A fresh process spends its first seconds compiling hot code (V8's
      // optimising tiers); a daemon did that long before. Both processes run
      // unmeasured first, so the first N does not pay it alone.
      await runOnce(ns[0]!, bench, jitWarmupMs, srtp);
    }
    for (const n of ns) {
      const plain: Row[] = [];
      const secure: Row[] = [];
      for (let rep = 0; rep < reps; rep++) {
        // plain and SRTP alternate which goes first: neither always follows the other
        const row = await runOnce(n, bench, windowMs, srtp, rep % 2 === 1);
        plain.push(row.plain);
        if (row.srtp) secure.push(row.srtp);
      }
      console.log(formatRow(String(n), plain));
      if (srtp) {
        console.log(formatRow(`${n} srtp`, secure));
        console.log(formatSrtpComparison(n, plain, secure));
      }
    }
  } finally {
    killAll();
  }
}

const role = arg('role', 'main');
const roles: Record<string, () => Promise<void>> = {
  main,
  echo: echoRole,
  media: mediaRole,
  relay: relayRole,
  generator: generatorRole,
};
const run = roles[role];
if (!run) throw new Error(`unknown role ${role}`);
run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
