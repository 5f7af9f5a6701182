// Issue 23 item 3: TCP deadlines against the started daemon, on loopback.
// A message trickled a byte at a time is cut at its deadline; a thousand
// partial-header connections from many 127.0.0.x sources fill the caps, the
// rest are refused at once, and all are destroyed at their deadlines until
// the daemon holds no more SIP TCP descriptors than before; idle connections
// whose peers never close their side are closed fully; a double CRLF gets a
// CRLF back. Peers here never answer a FIN (allowHalfOpen), as an attacker
// would not. Descriptors are the daemon's own, read from /proc/<pid>/fd.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type Daemon } from '../test/support/daemon.js';

const DEADLINE_MS = 2000;
const IDLE_MS = 3000;
const MAX_CONNECTIONS = 1000;
const PER_SOURCE = 20;

let daemon: Daemon;
let sipPort = 0;
const clients: Socket[] = [];

beforeAll(async () => {
  daemon = await startDaemon({
    GATEWAY_SIP_TCP_MESSAGE_DEADLINE_MS: String(DEADLINE_MS),
    GATEWAY_SIP_TCP_IDLE_TIMEOUT_MS: String(IDLE_MS),
    GATEWAY_SIP_TCP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    GATEWAY_SIP_TCP_MAX_CONNECTIONS_PER_SOURCE: String(PER_SOURCE),
  });
  const m = /"tcp":\{"host":"[^"]*","port":(\d+)\}[^\n]*"msg":"sip stack listening"/.exec(
    daemon.output(),
  );
  if (!m) throw new Error(`no SIP TCP port in the daemon's log:\n${daemon.output()}`);
  sipPort = Number(m[1]);
});

afterAll(async () => {
  for (const c of clients.splice(0)) c.destroy();
  await daemon?.stop();
});

/** The daemon's descriptors that are TCP sockets on its SIP port (the listener included). */
function sipSocketFds(): number {
  const inodes = new Set<string>();
  for (const file of ['tcp', 'tcp6']) {
    let table = '';
    try {
      table = readFileSync(`/proc/${daemon.pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (parseInt(f[1]!.split(':')[1]!, 16) === sipPort) inodes.add(f[9]!);
    }
  }
  let n = 0;
  for (const fd of readdirSync(`/proc/${daemon.pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${daemon.pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) n++;
    } catch {
      /* closed while reading */
    }
  }
  return n;
}

/** The embedded stack's counters as /metrics shows them. */
async function sipMetrics(): Promise<Record<string, number>> {
  const text = await fetch(`${daemon.baseUrl}/metrics`).then((r) => r.text());
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^gateway_sip_(tcp_\w+?)(?:_total)? (\d+)$/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}
const openBySip = (m: Record<string, number>) =>
  (m.tcp_connections_opened ?? 0) - (m.tcp_connections_closed ?? 0);

interface Peer {
  sock: Socket;
  data: () => string;
  /** The daemon closed (FIN) or reset it. */
  gone: () => boolean;
  goneAt: () => number;
}

function peer(localAddress = '127.0.0.1'): Promise<Peer> {
  const sock = connect({ port: sipPort, host: '127.0.0.1', localAddress, allowHalfOpen: true });
  clients.push(sock);
  let data = '';
  let goneAt = 0;
  const gone = () => (goneAt ||= performance.now());
  sock.on('data', (d) => (data += d.toString()));
  sock.on('end', gone);
  sock.on('close', gone);
  sock.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    sock.once('connect', () =>
      resolve({ sock, data: () => data, gone: () => goneAt > 0, goneAt: () => goneAt }),
    );
    sock.once('error', reject);
  });
}

async function until(cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`condition not met in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const options = (branch: string) =>
  `OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5999;branch=z9hG4bK${branch}\r\n` +
  `Max-Forwards: 70\r\nFrom: <sip:edge@127.0.0.1>;tag=${branch}\r\nTo: <sip:gw@127.0.0.1>\r\n` +
  `Call-ID: ${branch}@edge\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`;
const PARTIAL =
  'OPTIONS sip:gw@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:5999;branch=z9hG4bK';

describe('SIP over TCP against the daemon', () => {
  it('answers a double CRLF with one CRLF and ignores a lone CRLF before a request (RFC 5626 §4.4.1, RFC 3261 §7.5)', async () => {
    const p = await peer();
    p.sock.write('\r\n\r\n');
    await until(() => p.data() === '\r\n', 2000);
    p.sock.write('\r\n' + options('ka1'));
    await until(() => p.data().includes('\r\n\r\n', 2), 5000);
    expect(p.data()).toMatch(/^\r\nSIP\/2\.0 200 /);
    expect((await sipMetrics()).tcp_keep_alive_pongs).toBe(1);
    p.sock.destroy();
  });

  it('destroys a slowloris connection (a byte every 250 ms) at the deadline from its first byte', async () => {
    const before = await sipMetrics();
    const p = await peer();
    const text = options('slow');
    const started = performance.now();
    let i = 0;
    const trickle = setInterval(() => {
      if (!p.gone()) p.sock.write(text[i++ % text.length]!);
    }, 250);
    p.sock.write(text[i++]!);
    try {
      await until(() => p.gone(), DEADLINE_MS + 3000);
    } finally {
      clearInterval(trickle);
    }
    const tookMs = p.goneAt() - started;
    console.log(`slowloris: ${i} bytes sent, destroyed ${Math.round(tookMs)} ms after the first`);
    expect(tookMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(tookMs).toBeLessThan(DEADLINE_MS + 1000);
    const after = await sipMetrics();
    expect(after.tcp_closed_deadline! - before.tcp_closed_deadline!).toBe(1);
    expect(after.tcp_closed_idle).toBe(before.tcp_closed_idle);
  });

  it('1,000 partial-header connections from 52 sources: the caps refuse the rest at once, the deadlines close them all, the descriptors come back', async () => {
    await until(async () => openBySip(await sipMetrics()) === 0, 5000);
    const before = await sipMetrics();
    const fdsBefore = sipSocketFds();
    // 52 sources × 20 = 1,040 within the per-source cap (40 over the total),
    // and a 21st connection from the first source (over its own cap).
    const peers: Peer[] = [];
    for (let s = 0; s < 52; s++) {
      const n = s === 0 ? PER_SOURCE + 1 : PER_SOURCE;
      const batch = await Promise.all(Array.from({ length: n }, () => peer(`127.0.0.${10 + s}`)));
      peers.push(...batch);
    }
    expect(peers).toHaveLength(1041);
    await until(async () => {
      const m = await sipMetrics();
      return m.tcp_closed_cap! - before.tcp_closed_cap! === 41 && openBySip(m) === MAX_CONNECTIONS;
    }, 10_000);
    const fdsPeak = sipSocketFds();
    expect(fdsPeak - fdsBefore).toBe(MAX_CONNECTIONS);
    await until(() => peers.filter((p) => p.gone()).length === 41, 5000);

    // Every connection still open gets the start of a request and nothing more.
    const live = peers.filter((p) => !p.gone());
    const wroteAt = performance.now();
    for (const p of live) p.sock.write(PARTIAL);
    await until(() => sipSocketFds() === fdsBefore, DEADLINE_MS + 5000);
    const closedAfterMs = performance.now() - wroteAt;
    await until(() => live.every((p) => p.gone()), 5000);
    const after = await sipMetrics();
    console.log(
      `partial headers: ${live.length} accepted, ${peers.length - live.length} refused at the caps; ` +
        `daemon's SIP TCP descriptors ${fdsBefore} → ${fdsPeak} → ${sipSocketFds()}, ` +
        `back ${Math.round(closedAfterMs)} ms after the partial writes (deadline ${DEADLINE_MS} ms)`,
    );
    expect(live).toHaveLength(MAX_CONNECTIONS);
    expect(closedAfterMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(after.tcp_closed_deadline! - before.tcp_closed_deadline!).toBe(MAX_CONNECTIONS);
    expect(after.tcp_closed_cap! - before.tcp_closed_cap!).toBe(41);
    expect(openBySip(after)).toBe(0);
    for (const p of peers) p.sock.destroy();
  });

  it('idle connections whose peers keep their side open are closed fully: FIN, then the descriptor', async () => {
    await until(async () => openBySip(await sipMetrics()) === 0, 5000);
    const before = await sipMetrics();
    const fdsBefore = sipSocketFds();
    const peers: Peer[] = [];
    for (const s of [70, 71])
      peers.push(
        ...(await Promise.all(Array.from({ length: PER_SOURCE }, () => peer(`127.0.0.${s}`)))),
      );
    const openedAt = performance.now();
    await until(() => sipSocketFds() === fdsBefore + peers.length, 5000);
    // Idle timeout, at most one sweep (1 s) late, then at most a 1 s grace.
    await until(() => sipSocketFds() === fdsBefore, IDLE_MS + 4000);
    const closedAfterMs = performance.now() - openedAt;
    const after = await sipMetrics();
    console.log(
      `idle: ${peers.length} connections, descriptors back ${Math.round(closedAfterMs)} ms after opening (idle timeout ${IDLE_MS} ms)`,
    );
    expect(peers.every((p) => p.gone())).toBe(true);
    expect(closedAfterMs).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(after.tcp_closed_idle! - before.tcp_closed_idle!).toBe(peers.length);
    expect(openBySip(after)).toBe(0);
    for (const p of peers) p.sock.destroy();
  });
});
