// Webhook delivery under the HTTP burst (issue 25): the same open-loop
// initiate-call burst as http-burst.ts (every protection on, calls scheduled a
// day ahead: each accepted call writes call.accepted and call.scheduled in
// its transaction), against two daemons started alike, one without a webhook
// endpoint and one with an endpoint at a receiver on loopback that verifies
// every signature. Per round: the API's latency with and without the outbox
// (their ratio), the events delivered, the delivery lag (receipt − the
// event's timestamp, the instant of the change), the delivery throughput and
// the drain time after the burst.
//
//   npx tsx sip-test/load/webhook-bench.ts [--rate 100] [--seconds 20] [--rounds 2]
import { parseArgs } from 'node:util';
import type { Daemon } from '../../test/support/daemon.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { KEY, runHttpBurst, startBurstDaemon, summary, type BurstReport } from './http-burst.js';

export interface WebhookBenchRound {
  without: BurstReport;
  with: BurstReport;
  /** with / without, initiate-call p50 and p99. */
  apiRatio: { p50: number; p99: number };
  accepted: number;
  eventsExpected: number;
  eventsDelivered: number;
  unverified: number;
  duplicateIds: number;
  lagMs: { p50: number; p99: number; max: number };
  /** Events delivered per second, from the burst's start to the last delivery. */
  deliveredPerSecond: number;
  /** From the burst's last answer to the last delivery, ms. */
  drainMs: number;
  /** The worker's ceiling: a second burst's events piled up behind a stalled receiver, then drained. */
  backlog: { events: number; drainMs: number; perSecond: number; byStatus: Record<string, number> };
}

const ENV = {
  // A stalled receiver's requests wait out the burst instead of timing out into retries.
  GATEWAY_WEBHOOKS_TIMEOUT_MS: '120000',
  GATEWAY_WEBHOOKS_ALLOW_HTTP: 'true',
  GATEWAY_WEBHOOKS_ALLOWED_NETWORKS: '127.0.0.0/8',
};

export async function webhookBenchRound(o: {
  rate: number;
  seconds: number;
}): Promise<WebhookBenchRound> {
  const burst = { rate: o.rate, seconds: o.seconds, boundMs: 5000 };
  let plain: Daemon | undefined;
  let hooked: Daemon | undefined;
  const receiver = await WebhookReceiver.listen();
  try {
    plain = await startBurstDaemon(ENV);
    const without = await runHttpBurst(plain, burst);
    await plain.stop();
    plain = undefined;

    hooked = await startBurstDaemon(ENV);
    const created = await hooked.api(
      'POST',
      '/api/v1/webhooks',
      { url: receiver.url, eventTypes: ['call.accepted', 'call.scheduled'] },
      { 'x-api-key': KEY },
    );
    if (created.status !== 201) throw new Error(`webhook: ${JSON.stringify(created.json)}`);
    receiver.secret = (created.json as { secret: string }).secret;
    const startedAt = Date.now();
    const withHooks = await runHttpBurst(hooked, burst);
    const burstEnd = Date.now();
    const accepted = withHooks.byStatus['200'] ?? 0;
    const expected = 2 * accepted;
    const deadline = Date.now() + 60_000;
    while (receiver.received.length < expected && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const got = receiver.received.slice();
    const last = got.reduce((m, r) => Math.max(m, r.at), startedAt);
    const lags = got.map(
      (r) => r.at - Date.parse((r.body as { timestamp?: string }).timestamp ?? ''),
    );
    const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
    const backlog = await drainBacklog(hooked, receiver, o);
    return {
      without,
      with: withHooks,
      apiRatio: {
        p50: ratio(withHooks.acceptedLatencyMs.p50, without.acceptedLatencyMs.p50),
        p99: ratio(withHooks.acceptedLatencyMs.p99, without.acceptedLatencyMs.p99),
      },
      accepted,
      eventsExpected: expected,
      eventsDelivered: got.length,
      unverified: got.filter((r) => !r.verified).length,
      duplicateIds: got.length - new Set(got.map((r) => r.id)).size,
      lagMs: summary(lags),
      deliveredPerSecond: Math.round((got.length / ((last - startedAt) / 1000)) * 10) / 10,
      drainMs: Math.max(0, last - burstEnd),
      backlog,
    };
  } finally {
    await plain?.stop();
    await hooked?.stop();
    await receiver.stop();
  }
}

/**
 * The worker's ceiling: a burst while the receiver stalls (16 requests wait
 * in flight, the rest pile up due in the outbox), then the receiver answers
 * again and the backlog drains as fast as the worker sends.
 */
async function drainBacklog(
  daemon: Daemon,
  receiver: WebhookReceiver,
  o: { rate: number; seconds: number },
): Promise<WebhookBenchRound['backlog']> {
  let release!: () => void;
  receiver.gate = new Promise<void>((r) => (release = r));
  const before = receiver.received.length;
  // New numbers: the first burst's calls are still scheduled (one call per number).
  const held = await runHttpBurst(daemon, { ...o, boundMs: 5000, firstNumber: 500_000 });
  const events = 2 * (held.byStatus['200'] ?? 0);
  const t0 = Date.now();
  release();
  receiver.gate = undefined;
  const deadline = t0 + 120_000;
  while (receiver.received.length - before < events && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  const drainMs = Math.max(1, (receiver.received.at(-1)?.at ?? t0) - t0);
  const drained = receiver.received.length - before;
  return {
    byStatus: held.byStatus,
    events: drained,
    drainMs,
    perSecond: Math.round((drained / drainMs) * 10_000) / 10,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '100' },
      seconds: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '2' },
    },
  });
  for (let i = 0; i < Number(values.rounds); i++) {
    const r = await webhookBenchRound({
      rate: Number(values.rate),
      seconds: Number(values.seconds),
    });
    const { without, with: w, ...rest } = r;
    console.log(
      JSON.stringify(
        {
          round: i + 1,
          ...rest,
          initiateAcceptedMs: { without: without.acceptedLatencyMs, with: w.acceptedLatencyMs },
          daemonCpuPct: { without: without.daemonCpuPct, with: w.daemonCpuPct },
          byStatus: { without: without.byStatus, with: w.byStatus },
        },
        null,
        1,
      ),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
