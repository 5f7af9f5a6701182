// Issue 23's scene, against the started daemon (`npm start`): a flood of
// mutated datagrams and INVITEs from strangers (loopback addresses other than
// 127.0.0.1), optionally the same flood from an allowed source so that the
// server transaction budget fills, while a real SIPp peer on the trunk's
// address (127.0.0.1) sends OPTIONS and a real call runs through the daemon
// to a SIPp far end that hangs up after the flood. The suite runs it small
// (sip-test/edge-flood.test.ts); sip-test/load/edge-flood.ts runs it full size.
import { createSocket, type Socket } from 'node:dgram';
import { FarEnds } from './far-end.js';
import { startGateway, type Gateway } from './gateway-harness.js';
import { basesFrom, mutatedDatagrams } from './mutated-datagrams.js';
import { startSipp, type SippProcess } from '../runner/sipp-runner.js';

export interface EdgeFloodPlan {
  /** Mutated datagrams from strangers, sent at `floodRate` per second, round robin over `floodSources`. */
  floodDatagrams: number;
  floodRate: number;
  floodSources: string[];
  /** Well-formed INVITEs from strangers, each its own Call-ID, spread over the flood. */
  strangerInvites: number;
  strangerSources: string[];
  /** The same kind of flood from an address in sip.allowedSources: it fills the server budget. */
  /** Well-formed requests (INVITE and MESSAGE in turn, each its own Call-ID, never
   *  ACKed) from an address in sip.allowedSources, a runaway trunk: each one
   *  holds a server transaction for 64 × T1, so they fill the server budget. */
  trustedFlood?: { requests: number; rate: number; source: string };
  /** OPTIONS per second from SIPp on the trunk's address, from before the flood until after it. */
  optionsRate: number;
  /** Extra daemon environment (budgets, rate limit, buffers). */
  env?: Record<string, string>;
  seed?: number;
  log?: (line: string) => void;
}

export interface MetricSample {
  atMs: number;
  heapUsedBytes: number;
  rssBytes: number;
  serverTransactions: number;
}

export interface EdgeFloodResult {
  durationMs: number;
  options: { sent: number; answered: number; failed: number; sippExit: number | null };
  call: {
    status: string;
    endCallReason: string;
    duration: number;
    /** RTP packets the call's record counted (its networkQuality). */
    packetsReceived: number;
  };
  /** The daemon's warning and error log lines, when there were any. */
  daemonWarnings: string[];
  strangers: {
    invitesSent: number;
    /** INVITEs that got a response, and the most responses one INVITE got. */
    invitesAnswered: number;
    maxResponsesPerInvite: number;
    statuses: Record<string, number>;
    floodSent: number;
    floodReplies: number;
  };
  trusted?: { sent: number; replies: number; statuses: Record<string, number> };
  daemon: {
    budget: number;
    heapBaselineBytes: number;
    heapMaxBytes: number;
    rssBaselineBytes: number;
    rssMaxBytes: number;
    serverTransactionsMax: number;
    /** Heap at the highest transaction count seen (the budget when it filled). */
    heapAtMaxTransactionsBytes: number;
    dropped: Record<string, number>;
    silencings: number;
    statelessResponses: number;
    transactionsCreated: number;
    messagesIn: number;
    udpReceiveBufferBytes: number;
    udpKernelDrops: number;
  };
  samples: MetricSample[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `name` or `name{labels}` from a Prometheus text page; NaN when absent. */
export function metric(text: string, name: string, labels = ''): number {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const sel = labels ? `\\{${esc(labels)}\\}` : '';
  const m = new RegExp(`^${esc(name)}${sel} ([^\\s]+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

async function metrics(gw: Gateway): Promise<string> {
  const res = await fetch(`${gw.daemon.baseUrl}/metrics`);
  return res.text();
}

interface Sender {
  socket: Socket;
  host: string;
  port: number;
  replies: string[];
}

async function sender(host: string, keep: boolean): Promise<Sender> {
  const socket = createSocket({ type: 'udp4', sendBufferSize: 1 << 20 });
  const s: Sender = { socket, host, port: 0, replies: [] };
  let n = 0;
  socket.on('message', (m) => {
    if (keep) s.replies.push(m.toString('latin1'));
    else s.replies.length = ++n;
  });
  await new Promise<void>((r) => socket.bind(0, host, () => r()));
  s.port = socket.address().port;
  return s;
}

/** An out-of-dialog request from `s` with its own Call-ID (an INVITE with SDP, or a MESSAGE). */
function request(s: Sender, method: 'INVITE' | 'MESSAGE', callId: string): Buffer {
  const body =
    method === 'INVITE'
      ? 'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n'
      : 'hello';
  const type = method === 'INVITE' ? 'application/sdp' : 'text/plain';
  return Buffer.from(
    `${method} sip:+15550001111@127.0.0.1 SIP/2.0\r\n` +
      `Via: SIP/2.0/UDP ${s.host}:${s.port};branch=z9hG4bK${callId};rport\r\n` +
      `Max-Forwards: 70\r\nFrom: "scanner" <sip:100@${s.host}>;tag=${callId}\r\n` +
      `To: <sip:+15550001111@127.0.0.1>\r\nCall-ID: ${callId}\r\nCSeq: 1 ${method}\r\n` +
      `Contact: <sip:100@${s.host}:${s.port}>\r\nUser-Agent: friendly-scanner\r\n` +
      `Content-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    'latin1',
  );
}

/** Sends `items` at `rate` per second (5 ms slots, catching up on the schedule). */
async function pace<T>(items: T[], rate: number, send: (item: T) => void): Promise<void> {
  const start = performance.now();
  let i = 0;
  while (i < items.length) {
    const due = Math.min(items.length, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    while (i < due) send(items[i++]!);
    await sleep(5);
  }
}

const count = (list: string[]) => {
  const out: Record<string, number> = {};
  for (const r of list) {
    const code = r.slice(8, 11);
    out[code] = (out[code] ?? 0) + 1;
  }
  return out;
};

export async function runEdgeFlood(plan: EdgeFloodPlan): Promise<EdgeFloodResult> {
  const log = plan.log ?? (() => undefined);
  const seed = plan.seed ?? 20261123;
  const floodSeconds = plan.floodDatagrams / plan.floodRate;
  const gw = await startGateway({
    GATEWAY_RATE_LIMIT_MAX: '1000000',
    ...(plan.trustedFlood ? { GATEWAY_SIP_ALLOWED_SOURCES: `${plan.trustedFlood.source}/32` } : {}),
    ...plan.env,
  });
  const farEnds = new FarEnds();
  const sockets: Sender[] = [];
  let optionsPeer: SippProcess | undefined;
  try {
    const sipPort = Number(
      /"sipPort":(\d+)[^\n]*"msg":"gateway listening"/.exec(gw.daemon.output())?.[1],
    );
    if (!sipPort) throw new Error(`no sipPort in the daemon's output:\n${gw.daemon.output()}`);
    // The far end holds the call through the flood and the OPTIONS, then hangs up.
    const holdMs = Math.round(floodSeconds * 1000) + 4000;
    const far = await farEnds.start('uas-180-200-hold-bye-from-far-end.xml', {
      keys: { '-d': String(holdMs) },
      rtpEcho: true,
      timeoutSec: Math.ceil(holdMs / 1000) + 60,
    });
    const trunkId = await gw.trunk(far.port);
    // 127.0.0.1 becomes a trusted address once the daemon has looked at its trunks.
    for (let i = 0; i < 100; i++) {
      if (metric(await metrics(gw), 'gateway_sip_trusted_addresses') >= 1) break;
      await sleep(100);
    }
    const before = await metrics(gw);
    const budget = metric(before, 'gateway_sip_server_transactions_max');
    const callId = await gw.call(trunkId, '+12125550199');
    await gw.waitFor(callId, 'in_call', 20_000);

    // SIPp OPTIONS peer on 127.0.0.1 (the trunk's address), no retransmissions:
    // an OPTIONS lost anywhere is a failed call in SIPp's count.
    const optionsSeconds = floodSeconds + 2;
    const optionsSent = Math.max(1, Math.round(plan.optionsRate * optionsSeconds));
    optionsPeer = await startSipp({
      scenario: 'uac-options-200.xml',
      remote: `127.0.0.1:${sipPort}`,
      calls: optionsSent,
      timeoutSec: Math.ceil(optionsSeconds) + 60,
      extraArgs: ['-r', String(plan.optionsRate), '-nr', '-recv_timeout', '5000'],
    });

    // Metrics while it runs.
    const samples: MetricSample[] = [];
    const t0 = performance.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const text = await metrics(gw).catch(() => '');
        if (text)
          samples.push({
            atMs: Math.round(performance.now() - t0),
            heapUsedBytes: metric(text, 'nodejs_heap_size_used_bytes'),
            rssBytes: metric(text, 'process_resident_memory_bytes'),
            serverTransactions: metric(text, 'gateway_sip_server_transactions'),
          });
        await sleep(250);
      }
    })();
    await sleep(1000); // a baseline with the call and the OPTIONS running

    // The senders.
    const floodSenders = await Promise.all(plan.floodSources.map((h) => sender(h, false)));
    const inviteSenders = await Promise.all(plan.strangerSources.map((h) => sender(h, true)));
    const trusted = plan.trustedFlood ? await sender(plan.trustedFlood.source, true) : undefined;
    sockets.push(...floodSenders, ...inviteSenders, ...(trusted ? [trusted] : []));
    const perSource = Math.ceil(plan.floodDatagrams / floodSenders.length);
    const floodItems = interleave(
      floodSenders.map((s, i) =>
        mutatedDatagrams(perSource, seed + i, basesFrom(s.host, s.port)).map((buf) => ({ s, buf })),
      ),
    );
    floodItems.length = Math.min(floodItems.length, plan.floodDatagrams);
    const invites = Array.from({ length: plan.strangerInvites }, (_, i) => {
      const s = inviteSenders[i % inviteSenders.length]!;
      return { s, buf: request(s, 'INVITE', `stranger-${i}`) };
    });
    const trustedItems = trusted
      ? Array.from({ length: plan.trustedFlood!.requests }, (_, i) =>
          request(trusted, i % 2 === 0 ? 'INVITE' : 'MESSAGE', `allowed-${i}`),
        )
      : [];
    log(
      `flood: ${floodItems.length} mutated at ${plan.floodRate}/s from ${floodSenders.length} strangers, ` +
        `${invites.length} stranger INVITEs from ${inviteSenders.length}, ` +
        `${trustedItems.length} from the allowed ${plan.trustedFlood?.source ?? '-'}, ` +
        `${optionsSent} OPTIONS at ${plan.optionsRate}/s`,
    );
    const to = (s: Sender, buf: Buffer) => s.socket.send(buf, sipPort, '127.0.0.1');
    const started = performance.now();
    await Promise.all([
      pace(floodItems, plan.floodRate, ({ s, buf }) => to(s, buf)),
      pace(invites, plan.strangerInvites / floodSeconds, ({ s, buf }) => to(s, buf)),
      trusted
        ? pace(trustedItems, plan.trustedFlood!.rate, (buf) => to(trusted, buf))
        : Promise.resolve(),
    ]);
    const durationMs = Math.round(performance.now() - started);
    log(`flood sent in ${durationMs} ms`);

    const opt = await optionsPeer.done;
    const rec = await gw.waitFor(callId, undefined, holdMs + 30_000);
    await sleep(2000); // a retransmission to a stranger would come within 2 s (T1 500: 0.5, 1.5 s)
    sampling = false;
    await sampler;
    const after = await metrics(gw);

    const stat = (name: string) =>
      Number(new RegExp(`${name}\\s*\\|\\s*\\d+\\s*\\|\\s*(\\d+)`).exec(opt.output)?.[1] ?? NaN);
    const perInvite = new Map<string, number>();
    const inviteReplies: string[] = [];
    for (const s of inviteSenders) {
      for (const r of s.replies) {
        const id = /\r\nCall-ID: *([^\r]+)/i.exec(r)?.[1] ?? '?';
        perInvite.set(id, (perInvite.get(id) ?? 0) + 1);
        inviteReplies.push(r);
      }
    }
    const reasons = ['stranger', 'rate_limited', 'budget', 'malformed'];
    const heapBaseline = samples[0]?.heapUsedBytes ?? NaN;
    const rssBaseline = samples[0]?.rssBytes ?? NaN;
    let atMax = samples[0];
    for (const x of samples)
      if (!atMax || x.serverTransactions > atMax.serverTransactions) atMax = x;
    return {
      durationMs,
      options: {
        sent: optionsSent,
        answered: stat('Successful call'),
        failed: stat('Failed call'),
        sippExit: opt.code,
      },
      call: {
        status: rec.status,
        endCallReason: rec.endCallReason,
        duration: rec.duration,
        packetsReceived: rec.networkQuality?.packetsReceived ?? NaN,
      },
      daemonWarnings: gw.daemon
        .output()
        .split('\n')
        .filter((l) => /"level":(40|50|60)/.test(l))
        .slice(0, 20),
      strangers: {
        invitesSent: invites.length,
        invitesAnswered: perInvite.size,
        maxResponsesPerInvite: Math.max(0, ...perInvite.values()),
        statuses: count(inviteReplies),
        floodSent: floodItems.length,
        floodReplies: floodSenders.reduce((n, s) => n + s.replies.length, 0),
      },
      ...(trusted
        ? {
            trusted: {
              sent: trustedItems.length,
              replies: trusted.replies.length,
              statuses: count(trusted.replies),
            },
          }
        : {}),
      daemon: {
        budget,
        heapBaselineBytes: heapBaseline,
        heapMaxBytes: Math.max(...samples.map((x) => x.heapUsedBytes)),
        rssBaselineBytes: rssBaseline,
        rssMaxBytes: Math.max(...samples.map((x) => x.rssBytes)),
        serverTransactionsMax: atMax?.serverTransactions ?? NaN,
        heapAtMaxTransactionsBytes: atMax?.heapUsedBytes ?? NaN,
        dropped: Object.fromEntries(
          reasons.map((r) => [
            r,
            metric(after, 'gateway_sip_dropped_total', `reason="${r}"`) -
              metric(before, 'gateway_sip_dropped_total', `reason="${r}"`),
          ]),
        ),
        silencings: metric(after, 'gateway_sip_stranger_silencings_total'),
        statelessResponses: metric(after, 'gateway_sip_stateless_responses_total'),
        transactionsCreated: metric(after, 'gateway_sip_transactions_created_total'),
        messagesIn: metric(after, 'gateway_sip_messages_in_total'),
        udpReceiveBufferBytes: metric(after, 'gateway_sip_udp_receive_buffer_bytes'),
        udpKernelDrops: metric(after, 'gateway_sip_udp_kernel_drops_total'),
      },
      samples,
    };
  } finally {
    optionsPeer?.kill();
    farEnds.killAll();
    for (const s of sockets) s.socket.close();
    await gw.stop();
  }
}

/** a1 b1 c1 a2 b2 c2 … */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
  return out;
}
