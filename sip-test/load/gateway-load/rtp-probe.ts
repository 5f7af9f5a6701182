// The far end's media for the probe calls (a sample of every step's calls):
// receives the gateway's RTP, measures its send spacing (|gap − 20 ms|) and
// packets per flow, sends its own 50 packets/s per flow stamped with the send
// time, and reads the agent's stamps coming back (agent → RTP latency).
//
//   started by the runner: fork(rtp-probe.ts, ['--port', N]) → IPC { ready, port }
import { createSocket, type RemoteInfo } from 'node:dgram';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { serveParent } from './child-role.js';
import { BinnedHistogram } from './stats.js';
import { AGENT_MAGIC, FAR_END_MAGIC, findStamp, nowNs, writeStamp } from './stamp.js';

const FRAME_MS = 20;
const RTP_HEADER = 12;
const FLOW_IDLE_MS = 2000;

interface Flow {
  remote: RemoteInfo;
  firstSeen: number;
  lastSeen: number;
  /** Packets since the last reset. */
  packets: number;
  seq: number;
  ts: number;
  ssrc: number;
}

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
const rtp = createSocket('udp4');
const rtcp = createSocket('udp4'); // RTP + 1: the gateway's RTCP goes here and is dropped
const flows = new Map<string, Flow>();
const spacing = new BinnedHistogram(0.05, 2000);
const agentToRtp = new BinnedHistogram(0.1, 2000);
const loop = monitorEventLoopDelay({ resolution: 5 });
let windowStart = performance.now();
let foreign = 0;
loop.enable();

rtp.on('message', (msg, remote) => {
  const now = performance.now();
  if (msg.length < RTP_HEADER || msg[0]! >> 6 !== 2) return void foreign++;
  const pt = msg[1]! & 0x7f;
  if (pt >= 72 && pt <= 76) return; // RTCP multiplexed on the RTP port
  const key = `${remote.address}:${remote.port}`;
  let flow = flows.get(key);
  if (!flow) {
    flow = {
      remote,
      firstSeen: now,
      lastSeen: now,
      packets: 0,
      seq: Math.floor(Math.random() * 65536),
      ts: Math.floor(Math.random() * 2 ** 31),
      ssrc: Math.floor(Math.random() * 2 ** 31),
    };
    flows.set(key, flow);
  } else if (flow.lastSeen >= windowStart) {
    spacing.add(Math.abs(now - flow.lastSeen - FRAME_MS));
  }
  flow.lastSeen = now;
  flow.packets++;
  const stamp = findStamp(msg.subarray(RTP_HEADER), AGENT_MAGIC);
  if (stamp) agentToRtp.add(Number(nowNs() - stamp[1]) / 1e6);
});

/** Every 20 ms of wall time: one stamped packet to each live flow. */
function sendFrames(): void {
  const now = performance.now();
  for (const [key, flow] of flows) {
    if (now - flow.lastSeen > FLOW_IDLE_MS) {
      flows.delete(key);
      continue;
    }
    const packet = Buffer.alloc(RTP_HEADER + 160, 0xff);
    packet[0] = 0x80;
    packet[1] = 0; // PCMU
    packet.writeUInt16BE(flow.seq, 2);
    packet.writeUInt32BE(flow.ts >>> 0, 4);
    packet.writeUInt32BE(flow.ssrc, 8);
    flow.seq = (flow.seq + 1) & 0xffff;
    flow.ts = (flow.ts + 160) >>> 0;
    writeStamp(packet, RTP_HEADER, FAR_END_MAGIC, nowNs());
    rtp.send(packet, flow.remote.port, flow.remote.address);
  }
}

let next = performance.now();
function tick(): void {
  sendFrames();
  next += FRAME_MS;
  const now = performance.now();
  if (next < now - 5 * FRAME_MS) next = now; // fell far behind (stopped process): do not burst
  setTimeout(tick, Math.max(0, next - now));
}

function stats(reset: boolean): unknown {
  const now = performance.now();
  let packets = 0;
  let expected = 0;
  let active = 0;
  for (const f of flows.values()) {
    if (f.lastSeen < windowStart || f.packets === 0) continue;
    active++;
    packets += f.packets;
    expected += (f.lastSeen - Math.max(windowStart, f.firstSeen)) / FRAME_MS + 1;
  }
  const result = {
    flows: active,
    packets,
    expected: Math.round(expected),
    spacingMs: spacing.summary(),
    agentToRtpMs: agentToRtp.summary(),
    probeLoopP99Ms: loop.percentile(99) / 1e6,
    foreign,
    windowMs: now - windowStart,
  };
  if (reset) {
    windowStart = now;
    spacing.reset();
    agentToRtp.reset();
    loop.reset();
    for (const f of flows.values()) f.packets = 0;
  }
  return result;
}

serveParent((m) => (m.cmd === 'stats' ? stats(m.reset === true) : { error: 'unknown' }));
rtp.bind(Number(values.port), '127.0.0.1', () => {
  const port = rtp.address().port;
  rtcp.on('message', () => undefined);
  rtcp.on('error', () => undefined); // RTP + 1 taken: RTCP simply goes unread
  rtcp.bind(port + 1, '127.0.0.1');
  tick();
  process.send?.({ ready: true, port });
});
