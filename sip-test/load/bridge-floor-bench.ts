// The floor under "% of a core per bridged call": the least a Node process
// can do to bridge one call's audio to an agent the way the gateway does.
// For each call it holds one UDP socket and one WebSocket client (the `ws`
// package, as the daemon uses it), and per 20 ms frame each way it does only
// what the protocol needs:
//
//   RTP in  → strip the 12-byte header → Twilio `media` JSON (base64) → ws.send
//   ws in   → JSON.parse → base64 decode → 12-byte RTP header + payload → UDP send
//
// No pacing, no jitter buffer, no statistics, no recording, no second thread:
// what remains is the syscalls and the framing. The far end (an RTP generator
// and sink, and a WebSocket echo agent) runs in a process of its own, so the
// bridge's CPU is measured alone, as the load runner measures the daemon's.
//
//   npx tsx sip-test/load/bridge-floor-bench.ts [--n 100,200] [--seconds 10] [--warmup 5] [--reps 3]
//                                               [--cpu-prof-dir DIR]
//
// --cpu-prof-dir: the bridge process writes a V8 CPU profile there when it ends.
//
// Prints, per N, the bridge's CPU as % of one core per call (median of the
// repetitions) and the frames it forwarded each way against 50 × N × seconds.
import { fork, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { WebSocket, WebSocketServer } from 'ws';
import {
  cpuWindow,
  FRAME_MS,
  type Message,
  onCommand,
  sleep,
} from './media-bench/roles-support.js';

const SELF = fileURLToPath(import.meta.url);
const PAYLOAD_BYTES = 160;
const RTP_HEADER_BYTES = 12;

interface BridgeResult {
  cpuPct: number;
  windowMs: number;
  toAgent: number;
  toCallee: number;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function argList(name: string, fallback: number[]): number[] {
  return argValue(name)?.split(',').map(Number) ?? fallback;
}

async function bindUdp(): Promise<Socket> {
  const s = createSocket({ type: 'udp4', recvBufferSize: 8 << 20 });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

/** The far end: RTP to every bridge port each 20 ms, an RTP sink, and an echo agent. */
async function farRole(): Promise<void> {
  const rtp = await bindUdp();
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', r));
  let echoed = 0;
  wss.on('connection', (ws) => {
    let seq = 0;
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as { event: string; media?: { payload: string } };
      if (m.event !== 'media' || !m.media) return;
      seq += 1;
      echoed += 1;
      ws.send(
        `{"event":"media","sequenceNumber":"${seq}","media":{"payload":"${m.media.payload}"},"streamSid":"s"}`,
      );
    });
  });
  let timer: NodeJS.Timeout | undefined;
  onCommand(async (m: Message) => {
    if (m.cmd === 'ports') {
      return { rtp: rtp.address().port, ws: (wss.address() as { port: number }).port };
    }
    if (m.cmd === 'start') {
      const ports = m.ports as number[];
      const packet = Buffer.alloc(RTP_HEADER_BYTES + PAYLOAD_BYTES, 0xff);
      packet[0] = 0x80;
      // four slots of 5 ms, as a real far end's calls do not all tick together
      let slot = 0;
      timer = setInterval(() => {
        for (let i = slot; i < ports.length; i += 4) rtp.send(packet, ports[i]!, '127.0.0.1');
        slot = (slot + 1) % 4;
      }, FRAME_MS / 4);
      return null;
    }
    if (m.cmd === 'stop') {
      clearInterval(timer);
      return { echoed };
    }
    return null;
  });
}

/** The bridge under measurement: one UDP socket and one WebSocket per call. */
async function bridgeRole(): Promise<void> {
  const calls: { udp: Socket; ws: WebSocket }[] = [];
  let toAgent = 0;
  let toCallee = 0;
  onCommand(async (m: Message) => {
    if (m.cmd === 'open') {
      const sinkPort = m.rtpPort as number;
      for (let i = 0; i < (m.n as number); i++) {
        const udp = await bindUdp();
        const ws = new WebSocket(`ws://127.0.0.1:${m.wsPort as number}/`, {
          perMessageDeflate: false,
        });
        await new Promise<void>((r, j) => ws.once('open', r).once('error', j));
        const streamSid = JSON.stringify(`MZ${i}`);
        let seq = 0;
        let rtpSeq = 0;
        const ssrc = 0x1000 + i;
        udp.on('message', (msg) => {
          seq += 1;
          toAgent += 1;
          const payload = msg.subarray(RTP_HEADER_BYTES).toString('base64');
          const text =
            `{"event":"media","sequenceNumber":"${seq}","media":{"track":"inbound",` +
            `"chunk":"${seq}","timestamp":"${seq * FRAME_MS}","payload":"${payload}"},` +
            `"streamSid":${streamSid}}`;
          ws.send(Buffer.from(text), { binary: false });
        });
        ws.on('message', (data: Buffer) => {
          const e = JSON.parse(data.toString()) as { event: string; media?: { payload: string } };
          if (e.event !== 'media' || !e.media) return;
          const audio = Buffer.from(e.media.payload, 'base64');
          const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + audio.length);
          // RFC 3550 §5.1: V=2, PT 0 (PCMU), sequence, timestamp, SSRC
          packet[0] = 0x80;
          packet[1] = 0;
          rtpSeq = (rtpSeq + 1) & 0xffff;
          packet.writeUInt16BE(rtpSeq, 2);
          packet.writeUInt32BE((rtpSeq * PAYLOAD_BYTES) >>> 0, 4);
          packet.writeUInt32BE(ssrc, 8);
          audio.copy(packet, RTP_HEADER_BYTES);
          toCallee += 1;
          udp.send(packet, sinkPort, '127.0.0.1');
        });
        calls.push({ udp, ws });
      }
      return calls.map((c) => c.udp.address().port);
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
      for (const c of calls.splice(0)) {
        c.ws.terminate();
        c.udp.close();
      }
    }
    return null;
  });
}

function startRole(role: string): { child: ChildProcess; ask: <T>(m: Message) => Promise<T> } {
  const profDir = argValue('cpu-prof-dir');
  const prof = profDir && role === 'bridge' ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const child = fork(SELF, ['--role', role], { execArgv: ['--import', 'tsx', ...prof] });
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
    for (let rep = 0; rep < reps; rep++) {
      const far = startRole('far');
      const bridge = startRole('bridge');
      try {
        const ports = await far.ask<{ rtp: number; ws: number }>({ cmd: 'ports' });
        const bridgePorts = await bridge.ask<number[]>({
          cmd: 'open',
          n,
          rtpPort: ports.rtp,
          wsPort: ports.ws,
        });
        await far.ask({ cmd: 'start', ports: bridgePorts });
        await sleep(warmup * 1000);
        runs.push(await bridge.ask<BridgeResult>({ cmd: 'measure', windowMs: seconds * 1000 }));
        await far.ask({ cmd: 'stop' });
        await bridge.ask({ cmd: 'close' });
      } finally {
        far.child.kill('SIGTERM');
        bridge.child.kill('SIGTERM');
      }
    }
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

const role = process.argv.includes('--role')
  ? process.argv[process.argv.indexOf('--role') + 1]
  : '';
if (role === 'far') void farRole();
else if (role === 'bridge') void bridgeRole();
else
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
