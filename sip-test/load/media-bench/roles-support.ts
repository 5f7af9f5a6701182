// Helpers shared by media-bench.ts's roles: each role is its own process,
// driven by the orchestrator over the IPC channel with { cmd, ... } messages.
import { createSocket, type Socket } from 'node:dgram';

export const FRAME_MS = 20;

export type Message = { cmd: string; [k: string]: unknown };

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface CpuWindow {
  cpuPct: number;
  userPct: number;
  windowMs: number;
  wakeups: number;
}

export function cpuWindow(): () => CpuWindow {
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

export async function bindUdp(port = 0, recvBufferSize?: number): Promise<Socket> {
  const s = createSocket({ type: 'udp4', ...(recvBufferSize ? { recvBufferSize } : {}) });
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', r));
  return s;
}

export function onCommand(handler: (m: Message) => Promise<unknown>): void {
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
export function histogramPercentile(hist: Uint32Array, q: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= total * q) return i;
  }
  return NaN;
}
