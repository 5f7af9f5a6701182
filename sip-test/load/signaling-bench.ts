// Signaling benchmark: SIPp answers (uas-bench-answer.xml), our stack places
// short calls (INVITE, 200, ACK, BYE, 200) at rising rates.
//
//   npm run bench:signaling -- [--steps 100,200,400,600,800] [--seconds 10]
//                              [--client-transactions 10000]
//
// An INVITE client transaction stays in RFC 6026's Accepted state for Timer
// M (64 × T1 = 32 s) after its 2xx, so the stack's default budget of 10,000
// client transactions (sip.maxClientTransactions) admits about 300 calls/s
// sustained; past it, a new INVITE fails at once with a local 503. To
// measure the stack's own ceiling, give it a larger budget.
//
// Per step it prints calls/s offered and completed, failures, unexpected
// retransmissions, p50/p95 INVITE→200 and our process's CPU ms per call.

import { createSipStack, type SipStack } from '../../src/sip/index.js';
import { OFFER } from '../helpers.js';
import { startSipp } from '../runner/sipp-runner.js';

export interface StepResult {
  rate: number;
  offered: number;
  completed: number;
  failed: number;
  retransmissions: number;
  p50Ms: number;
  p95Ms: number;
  cpuMsPerCall: number;
  ok: boolean;
}

export interface BenchOptions {
  steps: number[];
  seconds: number;
  /** The stack's client transaction budget (its default when absent). */
  clientTransactions?: number;
  log?: (line: string) => void;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function runStep(
  stack: SipStack,
  port: number,
  rate: number,
  seconds: number,
): Promise<StepResult> {
  const latencies: number[] = [];
  let offered = 0;
  let completed = 0;
  let failed = 0;
  let inFlight = 0;
  const before = stack.stats().retransmissionsOut;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const placeCall = (): void => {
    offered++;
    inFlight++;
    const t0 = performance.now();
    const leg = stack.invite({
      target: { host: '127.0.0.1', port, transport: 'udp' },
      requestUri: `sip:bench@127.0.0.1:${port}`,
      from: { uri: 'sip:gw@127.0.0.1' },
      to: { uri: `sip:bench@127.0.0.1:${port}` },
      sdp: OFFER,
    });
    leg.once('answered', () => {
      latencies.push(performance.now() - t0);
      void leg.bye();
    });
    leg.once('ended', () => {
      completed++;
      inFlight--;
    });
    leg.once('failed', () => {
      failed++;
      inFlight--;
    });
  };
  // Pace in 5 ms ticks, catching up on the schedule (not on the tick count).
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const elapsed = (performance.now() - start) / 1000;
      const due = Math.min(Math.floor(elapsed * rate), rate * seconds);
      while (offered < due) placeCall();
      if (elapsed >= seconds) resolve();
      else setTimeout(tick, 5);
    };
    tick();
  });
  const drainUntil = performance.now() + 5000;
  while (inFlight > 0 && performance.now() < drainUntil)
    await new Promise((r) => setTimeout(r, 20));
  const cpu = process.cpuUsage(cpu0);
  failed += inFlight; // never finished within the drain window
  latencies.sort((a, b) => a - b);
  const retransmissions = stack.stats().retransmissionsOut - before;
  const cpuMsPerCall = (cpu.user + cpu.system) / 1000 / Math.max(1, completed);
  return {
    rate,
    offered,
    completed,
    failed,
    retransmissions,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    cpuMsPerCall,
    ok: failed === 0 && retransmissions === 0,
  };
}

export async function runSignalingBench(opts: BenchOptions): Promise<StepResult[]> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const stack = createSipStack({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: false,
    userAgent: 'gw-bench',
    ...(opts.clientTransactions
      ? { edge: { maxClientTransactions: opts.clientTransactions } }
      : {}),
  });
  await stack.start();
  const totalSeconds = opts.steps.length * (opts.seconds + 6) + 10;
  const sipp = await startSipp({
    scenario: 'uas-bench-answer.xml',
    calls: 100_000_000,
    timeoutSec: totalSeconds,
    traceMessages: false,
    extraArgs: ['-max_recv_loops', '10000', '-buff_size', '4194304', '-deadcall_wait', '2000'],
  });
  const results: StepResult[] = [];
  try {
    log('rate_cps  offered  completed  failed  retrans  p50_ms  p95_ms  cpu_ms/call  ok');
    for (const rate of opts.steps) {
      const r = await runStep(stack, sipp.port, rate, opts.seconds);
      results.push(r);
      log(
        [
          String(r.rate).padStart(8),
          String(r.offered).padStart(8),
          String(r.completed).padStart(10),
          String(r.failed).padStart(7),
          String(r.retransmissions).padStart(8),
          r.p50Ms.toFixed(2).padStart(7),
          r.p95Ms.toFixed(2).padStart(7),
          r.cpuMsPerCall.toFixed(3).padStart(12),
          r.ok ? ' yes' : ' NO',
        ].join(''),
      );
      if (!r.ok) break;
    }
  } finally {
    sipp.kill();
    await sipp.done;
    await stack.stop();
  }
  const sustained = results.filter((r) => r.ok).reduce((m, r) => Math.max(m, r.rate), 0);
  log(`sustained: ${sustained} cps with zero failed calls and zero retransmissions`);
  return results;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (
  process.argv[1] &&
  import.meta.url.endsWith(process.argv[1].replace(/^.*\/sip-test\//, 'sip-test/'))
) {
  const steps = (arg('steps') ?? '100,200,400,600,800').split(',').map(Number);
  const seconds = Number(arg('seconds') ?? '10');
  const budget = arg('client-transactions');
  runSignalingBench({
    steps,
    seconds,
    ...(budget ? { clientTransactions: Number(budget) } : {}),
  }).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
