// Issue 23 full size: the daemon (`npm start`) under 200,000 mutated
// datagrams at 4,000/s and 20,000 INVITEs from strangers, while SIPp on the
// trunk's address sends OPTIONS (without retransmissions) and a real call
// runs through it; then the same with a runaway allowed source filling the
// server transaction budget; then (for comparison) with the edge opened up
// as it was before issue 23. Plus the memory of one server transaction,
// measured in-process after a full GC.
//
//   flock /tmp/gw-load.lock npx tsx sip-test/load/edge-flood.ts \
//     [--runs 3] [--datagrams 200000] [--rate 4000] [--invites 20000] \
//     [--options-rate 10] [--trusted 50000] [--trusted-rate 1000] \
//     [--phases strangers,budget,open] [--out sip-test/load/reports/edge-flood.json]
//
// Prints one line per run and the medians; writes every run to --out.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { format } from 'prettier';
import { createSipStack } from '../../src/sip/index.js';
import { runEdgeFlood, type EdgeFloodResult } from '../support/edge-flood.js';

const MB = 1024 * 1024;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const addresses = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}.${i + 1}`);

/** Heap + external bytes per live server transaction, after a full GC (needs --expose-gc). */
async function perTransaction(method: 'INVITE' | 'MESSAGE', n: number): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const stack = createSipStack({
    udp: { host: '127.0.0.1', port: 0 },
    tcp: false,
    edge: { maxServerTransactions: n },
  });
  await stack.start();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external; // external includes the Buffers (arrayBuffers)
  };
  gc();
  gc();
  const before = used();
  for (let i = 0; i < n; i++) {
    const body =
      method === 'INVITE'
        ? 'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n'
        : 'hi';
    const text =
      `${method} sip:+15550001111@127.0.0.1 SIP/2.0\r\n` +
      `Via: SIP/2.0/UDP 127.0.0.9:5999;branch=z9hG4bKm${i};rport\r\nMax-Forwards: 70\r\n` +
      `From: <sip:100@127.0.0.9>;tag=f${i}\r\nTo: <sip:+15550001111@127.0.0.1>\r\n` +
      `Call-ID: mem-${i}\r\nCSeq: 1 ${method}\r\nContact: <sip:100@127.0.0.9:5999>\r\n` +
      `Content-Type: ${method === 'INVITE' ? 'application/sdp' : 'text/plain'}\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`;
    stack.receive(Buffer.from(text), { transport: 'udp', host: '127.0.0.9', port: 5999 });
    if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 300)); // the 100 Trying timers of the INVITEs fire
  gc();
  gc();
  const live = stack.stats().serverTransactions;
  const bytes = (used() - before) / live;
  await stack.stop();
  return bytes;
}

type Phase = 'strangers' | 'budget' | 'open';

async function runPhase(phase: Phase, opts: Record<string, number>): Promise<EdgeFloodResult> {
  const env: Record<string, string> =
    phase === 'open'
      ? {
          // the edge as it was before issue 23: everyone served, no limit, the OS's buffer
          GATEWAY_SIP_STRANGERS: 'serve',
          GATEWAY_SIP_STRANGER_RATE_LIMIT: '0',
          GATEWAY_SIP_MAX_SERVER_TRANSACTIONS: '1000000',
          GATEWAY_SIP_UDP_RECV_BUFFER_BYTES: '0',
          GATEWAY_SIP_UDP_SEND_BUFFER_BYTES: '0',
        }
      : {};
  return runEdgeFlood({
    floodDatagrams: opts.datagrams!,
    floodRate: opts.rate!,
    floodSources: addresses('127.0.1', 16),
    strangerInvites: opts.invites!,
    strangerSources: addresses('127.0.2', 100),
    ...(phase === 'budget'
      ? {
          trustedFlood: {
            requests: opts.trusted!,
            rate: opts.trustedRate!,
            source: '127.0.3.1',
          },
        }
      : {}),
    optionsRate: opts.optionsRate!,
    env,
    log: (l) => console.log(`  ${l}`),
  });
}

function line(phase: string, r: EdgeFloodResult): string {
  const d = r.daemon;
  return [
    `${phase.padEnd(9)}`,
    `OPTIONS ${r.options.answered}/${r.options.sent}`,
    `call ${r.call.status}/${r.call.endCallReason} (${r.call.duration} s, ${r.call.packetsReceived} RTP in)`,
    `strangers: ${r.strangers.invitesAnswered}/${r.strangers.invitesSent} INVITEs answered, max ${r.strangers.maxResponsesPerInvite} per INVITE ${JSON.stringify(r.strangers.statuses)}, flood replies ${r.strangers.floodReplies}/${r.strangers.floodSent}`,
    `tx max ${d.serverTransactionsMax} (budget ${d.budget})`,
    `heap ${(d.heapBaselineBytes / MB).toFixed(0)} → max ${(d.heapMaxBytes / MB).toFixed(0)} MB (at max tx ${(d.heapAtMaxTransactionsBytes / MB).toFixed(0)})`,
    `rss ${(d.rssBaselineBytes / MB).toFixed(0)} → ${(d.rssMaxBytes / MB).toFixed(0)} MB`,
    `dropped ${JSON.stringify(d.dropped)}`,
    `kernel drops ${d.udpKernelDrops}, rcvbuf ${d.udpReceiveBufferBytes}`,
  ].join(' | ');
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) {
    // Re-run under --expose-gc for the per-transaction figure.
    const r = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', ...process.argv.slice(1)],
      {
        stdio: 'inherit',
      },
    );
    process.exit(r.status ?? 1);
  }
  const runs = Number(arg('runs', '3'));
  const opts = {
    datagrams: Number(arg('datagrams', '200000')),
    rate: Number(arg('rate', '4000')),
    invites: Number(arg('invites', '20000')),
    optionsRate: Number(arg('options-rate', '10')),
    trusted: Number(arg('trusted', '50000')),
    trustedRate: Number(arg('trusted-rate', '1000')),
  };
  const phases = arg('phases', 'strangers,budget,open').split(',') as Phase[];
  const out = arg('out', 'sip-test/load/reports/edge-flood.json');

  const perTx: Record<string, number[]> = { INVITE: [], MESSAGE: [] };
  for (let i = 0; i < runs; i++) {
    for (const m of ['INVITE', 'MESSAGE'] as const) perTx[m]!.push(await perTransaction(m, 10_000));
  }
  console.log(
    `bytes per live server transaction (heap + external, after GC, 10,000 live): ` +
      `INVITE ${perTx.INVITE!.map((b) => b.toFixed(0)).join(', ')}; ` +
      `MESSAGE ${perTx.MESSAGE!.map((b) => b.toFixed(0)).join(', ')}`,
  );

  const results: Record<string, EdgeFloodResult[]> = {};
  for (let i = 0; i < runs; i++) {
    for (const phase of phases) {
      console.log(`run ${i + 1}/${runs}, ${phase}:`);
      const r = await runPhase(phase, opts);
      (results[phase] ??= []).push(r);
      console.log(line(phase, r));
      for (const w of r.daemonWarnings) console.log(`  daemon: ${w}`);
    }
  }

  const summary: Record<string, unknown> = {
    date: new Date().toISOString(),
    opts,
    runs,
    bytesPerTransaction: {
      INVITE: median(perTx.INVITE!),
      MESSAGE: median(perTx.MESSAGE!),
    },
  };
  console.log('\nmedians:');
  for (const [phase, rs] of Object.entries(results)) {
    const m = (f: (r: EdgeFloodResult) => number) => median(rs.map(f));
    const s = {
      optionsAnswered: m((r) => r.options.answered),
      optionsSent: m((r) => r.options.sent),
      callsAnswered: rs.filter((r) => r.call.endCallReason === 'caller_hungup').length,
      strangerInvitesAnswered: m((r) => r.strangers.invitesAnswered),
      maxResponsesPerStrangerInvite: Math.max(...rs.map((r) => r.strangers.maxResponsesPerInvite)),
      strangerResponses: m((r) => Object.values(r.strangers.statuses).reduce((a, b) => a + b, 0)),
      floodReplies: m((r) => r.strangers.floodReplies),
      serverTransactionsMax: m((r) => r.daemon.serverTransactionsMax),
      heapBaselineMb: m((r) => r.daemon.heapBaselineBytes / MB),
      heapMaxMb: m((r) => r.daemon.heapMaxBytes / MB),
      heapAtMaxTransactionsMb: m((r) => r.daemon.heapAtMaxTransactionsBytes / MB),
      rssBaselineMb: m((r) => r.daemon.rssBaselineBytes / MB),
      rssMaxMb: m((r) => r.daemon.rssMaxBytes / MB),
      kernelDrops: m((r) => r.daemon.udpKernelDrops),
      receiveBufferBytes: m((r) => r.daemon.udpReceiveBufferBytes),
      dropped: Object.fromEntries(
        ['stranger', 'rate_limited', 'budget', 'malformed'].map((k) => [
          k,
          m((r) => r.daemon.dropped[k] ?? NaN),
        ]),
      ),
      trustedStatuses: rs[0]?.trusted?.statuses,
    };
    summary[phase] = s;
    console.log(`${phase}: ${JSON.stringify(s)}`);
  }
  mkdirSync(dirname(out), { recursive: true });
  const report = JSON.stringify({
    ...summary,
    results: Object.fromEntries(
      Object.entries(results).map(([k, rs]) => [
        k,
        rs.map((r) => ({ ...r, samples: r.samples.filter((_, i) => i % 4 === 0) })),
      ]),
    ),
  });
  // formatted as the repository's prettier check wants it
  writeFileSync(out, await format(report, { parser: 'json' }));
  console.log(`report: ${out}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
