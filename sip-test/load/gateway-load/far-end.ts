// The far end of the load run: SIPp answering and echoing RTP (-rtp_echo on
// its -mp port) for most calls, and a second SIPp whose SDP points at the RTP
// probe for the sampled probe calls. Both wait for our BYE. Only processes
// started here are killed, by their pid.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setThreadRealtime } from '../../../src/media/worker/thread-priority.js';
import { allocatePort, SCENARIOS } from '../../runner/sipp-runner.js';
import { startChild, type ChildHandle } from './child-role.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const WAIT_BYE = join(SCENARIOS, 'uas-200-wait-bye-from-us.xml');

export interface FarEnd {
  echoSipPort: number;
  probeSipPort: number;
  probe: ChildHandle;
  /** The probe's nice value: raised so its own scheduling delays do not read as our send jitter. */
  probeNice: number;
  /** The probe's SCHED_RR priority (0: none, null: unknown). */
  probeRealtime: number | null;
  pids(): number[];
  stop(): void;
}

/**
 * The probe times packet arrivals in user space: when it waits for a core
 * behind SIPp or the agent, the gap it measures includes its own delay.
 * Run it ahead of them, and of the daemon's media worker (SCHED_RR 10 by
 * default), so that it measures the sender rather than itself (needs root
 * or CAP_SYS_NICE; otherwise it stays at what it got and the report says so).
 */
const PROBE_NICE = -15;
const PROBE_REALTIME = 20;

function raisePriority(pid: number, nice: number): number {
  try {
    setPriority(pid, nice);
  } catch {
    // not permitted: measure anyway, the report carries the value
  }
  return getPriority(pid);
}

async function udpFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = createSocket('udp4');
    s.once('error', () => res(false));
    s.bind(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

/** Ports SIPp binds from its -mp port: an audio and a video RTP/RTCP pair. */
const RTP_BLOCK = 4;

/**
 * An even port p in [min, max] with its RTP_BLOCK ports free on UDP, kept
 * clear of the blocks in `taken`: a SIPp just spawned has not bound its
 * ports yet, so a second pick could land on them.
 */
export async function freeRtpPort(min: number, max: number, taken: number[] = []): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = min + 2 * Math.floor((Math.random() * (max - min - RTP_BLOCK)) / 2);
    if (taken.some((t) => Math.abs(t - p) < RTP_BLOCK)) continue;
    const all = await Promise.all(Array.from({ length: RTP_BLOCK }, (_, d) => udpFree(p + d)));
    if (all.every(Boolean)) return p;
  }
  throw new Error(`no free RTP port in ${min}-${max}`);
}

function sipp(args: string[], logDir: string, name: string): ChildProcess {
  const out = openSync(join(logDir, `${name}.log`), 'w');
  const child = spawn('/usr/bin/sipp', args, { stdio: ['ignore', out, out] });
  closeSync(out);
  return child;
}

async function waitBound(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100 && child.exitCode === null; i++) {
    if (!(await udpFree(port))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (child.exitCode !== null) throw new Error(`sipp exited with ${child.exitCode}`);
}

const COMMON = ['-i', '127.0.0.1', '-t', 'u1', '-m', '100000000', '-nostdin'];
const timeoutArgs = (sec: number): string[] => ['-timeout', `${sec}s`, '-max_recv_loops', '5000'];

/** SIPp answering calls and echoing every RTP packet on `mediaPort` to its sender (-rtp_echo). */
async function spawnRtpEcho(
  logDir: string,
  mediaPort: number,
  timeoutSec: number,
): Promise<{ child: ChildProcess; sipPort: number }> {
  const sipPort = await allocatePort();
  const args = ['-sf', WAIT_BYE, '-p', String(sipPort), '-rtp_echo', '-mp', String(mediaPort)];
  const child = sipp([...args, ...COMMON, ...timeoutArgs(timeoutSec)], logDir, 'sipp-echo');
  return { child, sipPort };
}

/**
 * The RTP echo alone, bound and ready: what the load runner's calls send
 * their RTP to, for a benchmark that sends RTP without SIP.
 */
export async function startRtpEcho(opts: {
  timeoutSec: number;
  farRtpMin: number;
  farRtpMax: number;
}): Promise<{ mediaPort: number; pid: number; stop(): void }> {
  const logDir = mkdtempSync(join(tmpdir(), 'gw-rtp-echo-'));
  const mediaPort = await freeRtpPort(opts.farRtpMin, opts.farRtpMax);
  const { child, sipPort } = await spawnRtpEcho(logDir, mediaPort, opts.timeoutSec);
  const stop = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(logDir, { recursive: true, force: true });
  };
  try {
    await waitBound(sipPort, child);
  } catch (err) {
    stop();
    throw err;
  }
  return { mediaPort, pid: child.pid ?? -1, stop };
}

export async function startFarEnd(opts: {
  timeoutSec: number;
  farRtpMin: number;
  farRtpMax: number;
}): Promise<FarEnd> {
  const logDir = mkdtempSync(join(tmpdir(), 'gw-load-sipp-'));
  const taken: number[] = [];
  const rtpBlock = async (): Promise<number> => {
    const port = await freeRtpPort(opts.farRtpMin, opts.farRtpMax, taken);
    taken.push(port);
    return port;
  };
  const probe = startChild(resolve(HERE, 'rtp-probe.ts'), ['--port', String(await rtpBlock())]);
  const probePort = Number((await probe.ready).port);
  const probeNice = raisePriority(probe.pid, PROBE_NICE);
  const probeRealtime = setThreadRealtime(probe.pid, PROBE_REALTIME).realtime;
  // The probe SIPp's SDP names the probe's port instead of SIPp's own media port.
  const probeScenario = join(logDir, 'uas-200-wait-bye-to-probe.xml');
  writeFileSync(
    probeScenario,
    readFileSync(WAIT_BYE, 'utf8')
      .replace('[media_port]', String(probePort))
      .replace('c=IN IP[media_ip_type] [media_ip]', 'c=IN IP4 127.0.0.1'),
  );
  const { child: echo, sipPort: echoSipPort } = await spawnRtpEcho(
    logDir,
    await rtpBlock(),
    opts.timeoutSec,
  );
  const probeSipPort = await allocatePort();
  const probeSipp = sipp(
    [
      '-sf',
      probeScenario,
      '-p',
      String(probeSipPort),
      '-mp',
      String(await rtpBlock()),
      ...COMMON,
      ...timeoutArgs(opts.timeoutSec),
    ],
    logDir,
    'sipp-probe',
  );
  const children = [echo, probeSipp];
  const stop = (): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    probe.kill();
  };
  try {
    await waitBound(echoSipPort, echo);
    await waitBound(probeSipPort, probeSipp);
  } catch (err) {
    stop();
    throw err;
  }
  return {
    echoSipPort,
    probeSipPort,
    probe,
    probeNice,
    probeRealtime,
    pids: () => [...children.map((c) => c.pid ?? -1), probe.pid],
    stop,
  };
}
