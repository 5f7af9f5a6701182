// The floor under "% of a core per bridged call": the least a Node process
// spends to bridge one call's audio to an agent the way the gateway does,
// against the load runner's own far ends (SIPp's RTP echo and the stamp
// agent), so that the kernel's share of each packet is the same as in
// `npm run load`. For each call the bridge holds one UDP socket and one
// WebSocket client (the `ws` package, as the daemon uses it) and does only
// what the protocol needs:
//
//   every 20 ms  the agent's next frame (or silence) → 12-byte RTP header → UDP send
//   RTP in       → strip the header → Twilio `media` JSON (base64) → ws.send
//   ws in        → JSON.parse → base64 decode → the call's queue
//
// One thread, one timer for every call, no jitter buffer, no statistics, no
// recording, no record writes: what remains is the syscalls and the framing.
// The daemon does all of that and more per frame; this is what it cannot go
// below on this machine with this design (Node, ws, one packet per frame).
//
//   npx tsx sip-test/load/bridge-floor-bench.ts [--n 100,200] [--seconds 10] [--warmup 5] [--reps 3]
//                                               [--cpu-prof-dir DIR]
//
// --cpu-prof-dir: the bridge process writes a V8 CPU profile there when it ends.
// Prints, per N, the bridge's CPU as % of one core per call (the median of
// the repetitions, and each) and the frames it carried each way against
// 50 × N × seconds.
import { fork, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startChild } from './gateway-load/child-role.js';
import { startRtpEcho } from './gateway-load/far-end.js';
import {
  cpuWindow,
  FRAME_MS,
  type Message,
  onCommand,
  sleep,
} from './media-bench/roles-support.js';

const SELF = fileURLToPath(import.meta.url);
const HERE = dirname(SELF);
const PAYLOAD_BYTES = 160;
const RTP_HEADER_BYTES = 12;
/** Pacing slots per frame: the calls are spread over four 5 ms ticks, as a pacing clock does. */
const SLOTS = 4;
/** Frames queued per call at most (the agent echoes one per frame sent: the queue stays short). */
const MAX_QUEUED = 10;

interface BridgeResult {
  cpuPct: number;
  windowMs: number;
  toAgent: number;
  toCallee: number;
}

interface Call {
  udp: Socket;
  ws: WebSocket;
  queue: Buffer[];
  rtpSeq: number;
  ssrc: number;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function argList(name: string, fallback: number[]): number[] {
  return argValue(name)?.split(',').map(Number) ?? fallback;
}

async function bindUdp(): Promise<Socket> {
  const s = createSocket({ type: 'udp4' });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

/** RFC 3550 §5.1: V=2, PT 0 (PCMU), sequence, timestamp, SSRC, then the payload. */
function rtpPacket(call: Call, payload: Buffer): Buffer {
  const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + payload.length);
  packet[0] = 0x80;
  packet[1] = 0;
  call.rtpSeq = (call.rtpSeq + 1) & 0xffff;
  packet.writeUInt16BE(call.rtpSeq, 2);
  packet.writeUInt32BE((call.rtpSeq * PAYLOAD_BYTES) >>> 0, 4);
  packet.writeUInt32BE(call.ssrc, 8);
  payload.copy(packet, RTP_HEADER_BYTES);
  return packet;
}

/** The bridge under measurement. */
async function bridgeRole(): Promise<void> {
  const calls: Call[] = [];
  const silence = Buffer.alloc(PAYLOAD_BYTES, 0xff);
  let toAgent = 0;
  let toCallee = 0;
  let timer: NodeJS.Timeout | undefined;
  // Its timer would keep it alive: it ends with the orchestrator, however that ends.
  process.on('disconnect', () => process.exit(0));
  onCommand(async (m: Message) => {
    if (m.cmd === 'open') {
      const echoPort = m.echoPort as number;
      for (let i = 0; i < (m.n as number); i++) {
        const call: Call = {
          udp: await bindUdp(),
          ws: new WebSocket(`ws://127.0.0.1:${m.agentPort as number}/`, {
            perMessageDeflate: false,
          }),
          queue: [],
          rtpSeq: 0,
          ssrc: 0x1000 + i,
        };
        const { udp, ws } = call;
        await new Promise<void>((r, j) => ws.once('open', r).once('error', j));
        const streamSid = `MZ${i}`;
        ws.send(JSON.stringify({ event: 'start', streamSid, start: { streamSid } }));
        const sidJson = JSON.stringify(streamSid);
        let seq = 1;
        udp.on('message', (msg) => {
          seq += 1;
          toAgent += 1;
          const payload = msg.subarray(RTP_HEADER_BYTES).toString('base64');
          const text =
            `{"event":"media","sequenceNumber":"${seq}","media":{"track":"inbound",` +
            `"chunk":"${seq}","timestamp":"${seq * FRAME_MS}","payload":"${payload}"},` +
            `"streamSid":${sidJson}}`;
          ws.send(Buffer.from(text), { binary: false });
        });
        ws.on('message', (data: Buffer) => {
          const e = JSON.parse(data.toString()) as { event: string; media?: { payload: string } };
          if (e.event !== 'media' || !e.media) return;
          if (call.queue.length < MAX_QUEUED)
            call.queue.push(Buffer.from(e.media.payload, 'base64'));
        });
        calls.push(call);
      }
      let slot = 0;
      timer = setInterval(() => {
        for (let i = slot; i < calls.length; i += SLOTS) {
          const call = calls[i]!;
          const frame = call.queue.shift();
          if (frame) toCallee += 1;
          call.udp.send(rtpPacket(call, frame ?? silence), echoPort, '127.0.0.1');
        }
        slot = (slot + 1) % SLOTS;
      }, FRAME_MS / SLOTS);
      return null;
    }
    if (m.cmd === 'measure') {
      const a0 = toAgent;
      const c0 = toCallee;
      const stop = cpuWindow();
      await sleep(m.windowMs as number);
      const w = stop();
      const r: BridgeResult = {
        cpuPct: w.cpuPct,
        windowMs: w.windowMs,
        toAgent: toAgent - a0,
        toCallee: toCallee - c0,
      };
      return r;
    }
    if (m.cmd === 'close') {
      clearInterval(timer);
      for (const c of calls.splice(0)) {
        c.ws.terminate();
        c.udp.close();
      }
    }
    return null;
  });
}

function startBridge(): { child: ChildProcess; ask: <T>(m: Message) => Promise<T> } {
  const profDir = argValue('cpu-prof-dir');
  const prof = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const child = fork(SELF, ['--role', 'bridge'], { execArgv: ['--import', 'tsx', ...prof] });
  let waiting: ((m: { cmd: string; result?: unknown; error?: string }) => void) | undefined;
  const ready = new Promise<void>((r) => (waiting = () => r()));
  child.on('message', (m: { cmd: string; result?: unknown; error?: string }) => waiting?.(m));
  const ask = async <T>(m: Message): Promise<T> => {
    await ready;
    return new Promise<T>((resolve, reject) => {
      waiting = (r) => (r.cmd === 'error' ? reject(new Error(r.error)) : resolve(r.result as T));
      child.send(m);
    });
  };
  return { child, ask };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function measure(n: number, seconds: number, warmup: number): Promise<BridgeResult> {
  // the load runner's far ends: SIPp echoing RTP (-rtp_echo) and the stamp agent
  const echo = await startRtpEcho({
    timeoutSec: seconds + warmup + 60,
    farRtpMin: 20000,
    farRtpMax: 29999,
  });
  const agent = startChild(resolve(HERE, 'gateway-load/stamp-agent.ts'), []);
  const bridge = startBridge();
  try {
    const agentPort = Number((await agent.ready).port);
    await bridge.ask({ cmd: 'open', n, echoPort: echo.mediaPort, agentPort });
    await sleep(warmup * 1000);
    const r = await bridge.ask<BridgeResult>({ cmd: 'measure', windowMs: seconds * 1000 });
    await bridge.ask({ cmd: 'close' });
    return r;
  } finally {
    bridge.child.kill('SIGTERM');
    agent.kill();
    echo.stop();
  }
}

async function main(): Promise<void> {
  const ns = argList('n', [100, 200]);
  const seconds = argList('seconds', [10])[0]!;
  const warmup = argList('warmup', [5])[0]!;
  const reps = argList('reps', [3])[0]!;
  console.log(`bridge floor: n=${ns.join(',')} seconds=${seconds} warmup=${warmup} reps=${reps}`);
  console.log(
    '   n  cpu%/call (median)  runs                   to agent / expected  to callee / expected',
  );
  for (const n of ns) {
    const runs: BridgeResult[] = [];
    for (let rep = 0; rep < reps; rep++) runs.push(await measure(n, seconds, warmup));
    const perCall = runs.map((r) => r.cpuPct / n);
    const expected = (r: BridgeResult) => (n * r.windowMs) / FRAME_MS;
    const ratio = (f: (r: BridgeResult) => number) =>
      median(runs.map((r) => f(r) / expected(r))).toFixed(3);
    console.log(
      `${String(n).padStart(4)}  ${median(perCall).toFixed(3).padStart(18)}  ${perCall
        .map((x) => x.toFixed(3))
        .join(', ')
        .padEnd(
          22,
        )} ${ratio((r) => r.toAgent).padStart(20)} ${ratio((r) => r.toCallee).padStart(21)}`,
    );
  }
}

if (process.argv.includes('--role')) void bridgeRole();
else
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
