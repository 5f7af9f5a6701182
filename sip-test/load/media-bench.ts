// Media benchmark: N concurrent RTP sessions of ours against a UDP echo on
// loopback, and a bare UDP relay forwarding the same packet rate as the
// physical floor, each in its own process so CPU is measured per process.
//
//   npx tsx sip-test/load/media-bench.ts [--n 50,100,200,400] [--seconds 15] [--warmup 3] [--reps 3]
//                                        [--jit-warmup 15]
//
// --jit-warmup: seconds both measured processes run unmeasured at the first N
// before anything is measured (JIT compilation of the hot paths).
// Each N is measured `reps` times, ours and the relay back to back, and the
// medians are printed (the machine is shared: single runs vary by ±20 %).
// Per N it prints: our CPU % per call and its ratio to the bare relay's,
// packets sent ÷ (50 × N × seconds), send spacing p50/p99 as the echo sees
// it, clock drift (ppm, least-squares per flow), event-loop delay p99 and
// memory per call.

import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MediaEngine, type MediaSession } from '../../src/media/index.js';
import { SPACING_BIN_MS } from '../../src/media/pacing-clock.js';

const FRAME_MS = 20;
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
}

interface EchoResult {
  flows: number;
  packets: number;
  gapP50: number;
  gapP99: number;
  devP99: number;
  driftPpmMedian: number;
  driftPpmMaxAbs: number;
}

interface RelayResult extends CpuWindow {
  forwarded: number;
}

type Message = { cmd: string; [k: string]: unknown };

// ---------- helpers shared by the roles ----------

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface CpuWindow {
  cpuPct: number;
  userPct: number;
  windowMs: number;
  wakeups: number;
}

function cpuWindow(): () => CpuWindow {
  const c0 = process.cpuUsage();
  const r0 = process.resourceUsage();
  const t0 = performance.now();
  return () => {
    const c = process.cpuUsage(c0);
    const r = process.resourceUsage();
    const windowMs = performance.now() - t0;
    return {
      cpuPct: ((c.user + c.system) / 1000 / windowMs) * 100,
      userPct: (c.user / 1000 / windowMs) * 100,
      windowMs,
      // context switches: how often the process slept and woke up
      wakeups:
        r.voluntaryContextSwitches -
        r0.voluntaryContextSwitches +
        r.involuntaryContextSwitches -
        r0.involuntaryContextSwitches,
    };
  };
}

async function bindUdp(port = 0, recvBufferSize?: number): Promise<Socket> {
  const s = createSocket({ type: 'udp4', ...(recvBufferSize ? { recvBufferSize } : {}) });
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', r));
  return s;
}

function onCommand(handler: (m: Message) => Promise<unknown>): void {
  process.on('SIGTERM', () => process.exit(0)); // a clean exit writes --cpu-prof output
  process.on('message', (m: Message) => {
    handler(m).then(
      (result) => process.send!({ cmd: 'result', result }),
      (err: unknown) => process.send!({ cmd: 'error', error: String(err) }),
    );
  });
  process.send!({ cmd: 'ready' });
}

/** The bin index at quantile `q` of a histogram. */
function histogramPercentile(hist: Uint32Array, q: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= total * q) return i;
  }
  return NaN;
}

// ---------- role: echo (the far end for our sessions) ----------

async function echoRole(): Promise<void> {
  const socket = await bindUdp(0, 8 << 20);
  interface Flow {
    n: number;
    x0: number;
    cycles: number;
    lastSeq: number;
    lastAt: number;
    /** Least-squares sums of y = arrival − index × 20 ms against x = index (y relative to the first). */
    y0: number;
    sx: number;
    sy: number;
    sxx: number;
    sxy: number;
  }
  let flows = new Map<number, Flow>();
  let gaps = new Uint32Array(4000); // 0.05 ms bins up to 200 ms
  let recording = false;
  socket.on('message', (msg, rinfo) => {
    socket.send(msg, rinfo.port, rinfo.address);
    if (!recording || msg.length < 12 || (msg[1]! >= 192 && msg[1]! <= 223)) return;
    const now = performance.now();
    const seq = (msg[2]! << 8) | msg[3]!;
    let f = flows.get(rinfo.port);
    if (!f) {
      f = {
        n: 0,
        x0: seq,
        cycles: 0,
        lastSeq: seq,
        lastAt: now,
        y0: now,
        sx: 0,
        sy: 0,
        sxx: 0,
        sxy: 0,
      };
      flows.set(rinfo.port, f);
    } else {
      if (seq < f.lastSeq && f.lastSeq - seq > 30000) f.cycles += 65536;
      const gap = now - f.lastAt;
      gaps[Math.min(gaps.length - 1, Math.round(gap * 20))]!++;
      f.lastSeq = seq;
      f.lastAt = now;
    }
    // drift: the slope of (arrival − index × 20 ms) against the index, least
    // squares over every packet of the flow (queueing noise averages out)
    const x = f.cycles + seq - f.x0;
    const y = now - x * FRAME_MS - f.y0;
    f.sx += x;
    f.sy += y;
    f.sxx += x * x;
    f.sxy += x * y;
    f.n++;
  });
  onCommand(async (m) => {
    if (m.cmd === 'port') return socket.address().port;
    if (m.cmd === 'record') {
      flows = new Map();
      gaps = new Uint32Array(4000);
      recording = true;
      return null;
    }
    recording = false;
    const pct = (p: number, hist: Uint32Array, scale: number): number =>
      histogramPercentile(hist, p) / scale;
    const dev = new Uint32Array(4000);
    gaps.forEach((count, bin) => (dev[Math.round(Math.abs(bin / 20 - FRAME_MS) * 20)]! += count));
    const drifts: number[] = [];
    let packets = 0;
    for (const f of flows.values()) {
      packets += f.n;
      if (f.n < 150) continue; // under 3 s: too short for a slope
      const slope = (f.n * f.sxy - f.sx * f.sy) / (f.n * f.sxx - f.sx * f.sx); // ms per frame
      drifts.push((slope / FRAME_MS) * 1e6);
    }
    drifts.sort((a, b) => a - b);
    const result: EchoResult = {
      flows: flows.size,
      packets,
      gapP50: pct(0.5, gaps, 20),
      gapP99: pct(0.99, gaps, 20),
      devP99: pct(0.99, dev, 20),
      driftPpmMedian: drifts[Math.floor(drifts.length / 2)] ?? NaN,
      driftPpmMaxAbs: Math.max(...drifts.map(Math.abs)),
    };
    return result;
  });
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
      const answer =
        'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n' +
        `m=audio ${m.echoPort as number} RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n`;
      const onFrame = (): void => {
        framesReceived++;
      };
      sessions = [];
      for (let i = 0; i < n; i++) {
        const s = await engine.createSession();
        s.createOffer();
        s.applyAnswer(answer);
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
        framesReceived: framesReceived - frames0,
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

// ---------- roles: bare relay (measured) and its traffic generator ----------

async function relayRole(): Promise<void> {
  let sockets: Socket[] = [];
  let forwarded = 0;
  onCommand(async (m) => {
    if (m.cmd === 'open') {
      const sinkPort = m.sinkPort as number;
      for (let i = 0; i < (m.n as number); i++) {
        const s = await bindUdp();
        // the floor: receive a datagram, send it on; nothing else
        s.on('message', (msg) => {
          forwarded++;
          s.send(msg, sinkPort, '127.0.0.1');
        });
        sockets.push(s);
      }
      return sockets.map((s) => s.address().port);
    }
    if (m.cmd === 'measure') {
      const f0 = forwarded;
      const stop = cpuWindow();
      await sleep(m.windowMs as number);
      const result: RelayResult = { ...stop(), forwarded: forwarded - f0 };
      return result;
    }
    for (const s of sockets) s.close();
    sockets = [];
    return null;
  });
}

async function generatorRole(): Promise<void> {
  const socket = await bindUdp(0, 8 << 20);
  let timer: NodeJS.Timeout | null = null;
  onCommand(async (m) => {
    if (m.cmd === 'port') return socket.address().port;
    if (m.cmd === 'start') {
      const ports = m.ports as number[];
      const packet = Buffer.alloc(172, 0xff);
      packet[0] = 0x80;
      const slots = 4;
      const t0 = performance.now();
      let tick = 0;
      const run = (): void => {
        while (t0 + tick * (FRAME_MS / slots) <= performance.now() + 1) {
          const slot = tick % slots;
          for (let i = slot; i < ports.length; i += slots)
            socket.send(packet, ports[i]!, '127.0.0.1');
          tick++;
        }
        timer = setTimeout(
          run,
          Math.max(0, t0 + tick * (FRAME_MS / slots) - 1 - performance.now()),
        );
      };
      run();
      return null;
    }
    if (timer) clearTimeout(timer);
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

  static start(role: string): Child {
    // MEDIA_BENCH_NODE_ARGS (e.g. --cpu-prof) goes to the measured media process only
    const extra = role === 'media' ? (process.env.MEDIA_BENCH_NODE_ARGS ?? '').split(' ') : [];
    const args = [...extra.filter(Boolean), '--expose-gc', '--import', 'tsx', SELF, '--role', role];
    const proc = spawn(process.execPath, args, {
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

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

let windowMs = 15_000;
let warmupMs = 3_000;
let jitWarmupMs = 15_000;

/** One measurement of ours and one of the floor, back to back, at N calls. */
async function runOnce(
  n: number,
  c: { echo: Child; media: Child; relay: Child; generator: Child },
  echoPort: number,
  sinkPort: number,
): Promise<Row> {
  await c.media.ask({ cmd: 'setup', n, echoPort, warmupMs });
  await c.echo.ask({ cmd: 'record' });
  const ours = await c.media.ask<MediaResult>({ cmd: 'measure', windowMs });
  const seen = await c.echo.ask<EchoResult>({ cmd: 'report' });
  await c.media.ask({ cmd: 'teardown' });
  // the floor: the same packet rate through a bare relay
  const ports = await c.relay.ask<number[]>({ cmd: 'open', n, sinkPort });
  await c.generator.ask({ cmd: 'start', ports });
  await sleep(warmupMs);
  const floor = await c.relay.ask<RelayResult>({ cmd: 'measure', windowMs });
  await c.generator.ask({ cmd: 'stop' });
  await c.relay.ask({ cmd: 'close' });
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

async function main(): Promise<void> {
  const ns = arg('n', '50,100,200,400').split(',').map(Number);
  windowMs = Number(arg('seconds', '15')) * 1000;
  warmupMs = Number(arg('warmup', '3')) * 1000;
  const reps = Number(arg('reps', '3'));
  jitWarmupMs = Number(arg('jit-warmup', '15')) * 1000;
  const echo = Child.start('echo');
  const media = Child.start('media');
  const relay = Child.start('relay');
  const generator = Child.start('generator');
  const children = [echo, media, relay, generator];
  const killAll = (): void => children.forEach((c) => c.stop());
  process.on('exit', killAll);
  try {
    const echoPort = await echo.ask<number>({ cmd: 'port' });
    const sinkPort = await generator.ask<number>({ cmd: 'port' });
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
      const measured = windowMs;
      windowMs = jitWarmupMs;
      await runOnce(ns[0]!, { echo, media, relay, generator }, echoPort, sinkPort);
      windowMs = measured;
    }
    for (const n of ns) {
      const rows: Row[] = [];
      for (let rep = 0; rep < reps; rep++) {
        rows.push(await runOnce(n, { echo, media, relay, generator }, echoPort, sinkPort));
      }
      const med = (f: (r: Row) => number): number => median(rows.map(f));
      console.log(
        [
          n,
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
        ].join(' | '),
      );
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
