// media-bench.ts's far-end roles: the echo our sessions talk to, the bare
// UDP relay measured as the floor, and the generator that feeds the relay.
import type { Socket } from 'node:dgram';
import {
  bindUdp,
  cpuWindow,
  type CpuWindow,
  FRAME_MS,
  histogramPercentile,
  onCommand,
  sleep,
} from './roles-support.js';

export interface EchoResult {
  flows: number;
  packets: number;
  gapP50: number;
  gapP99: number;
  devP99: number;
  driftPpmMedian: number;
  driftPpmMaxAbs: number;
}

export interface RelayResult extends CpuWindow {
  forwarded: number;
}

// ---------- role: echo (the far end for our sessions) ----------

export async function echoRole(): Promise<void> {
  const socket = await bindUdp(0, 8 << 20);
  interface Flow {
    n: number;
    x0: number;
    cycles: number;
    lastSeq: number;
    lastAt: number;
    /** Least-squares sums of y = arrival − index × 20 ms against x = index (y relative to the first). */
    y0: number;
    sx: number;
    sy: number;
    sxx: number;
    sxy: number;
  }
  let flows = new Map<number, Flow>();
  let gaps = new Uint32Array(4000); // 0.05 ms bins up to 200 ms
  let recording = false;
  socket.on('message', (msg, rinfo) => {
    socket.send(msg, rinfo.port, rinfo.address);
    if (!recording || msg.length < 12 || (msg[1]! >= 192 && msg[1]! <= 223)) return;
    const now = performance.now();
    const seq = (msg[2]! << 8) | msg[3]!;
    let f = flows.get(rinfo.port);
    if (!f) {
      f = {
        n: 0,
        x0: seq,
        cycles: 0,
        lastSeq: seq,
        lastAt: now,
        y0: now,
        sx: 0,
        sy: 0,
        sxx: 0,
        sxy: 0,
      };
      flows.set(rinfo.port, f);
    } else {
      if (seq < f.lastSeq && f.lastSeq - seq > 30000) f.cycles += 65536;
      const gap = now - f.lastAt;
      gaps[Math.min(gaps.length - 1, Math.round(gap * 20))]!++;
      f.lastSeq = seq;
      f.lastAt = now;
    }
    // drift: the slope of (arrival − index × 20 ms) against the index, least
    // squares over every packet of the flow (queueing noise averages out)
    const x = f.cycles + seq - f.x0;
    const y = now - x * FRAME_MS - f.y0;
    f.sx += x;
    f.sy += y;
    f.sxx += x * x;
    f.sxy += x * y;
    f.n++;
  });
  onCommand(async (m) => {
    if (m.cmd === 'port') return socket.address().port;
    if (m.cmd === 'record') {
      flows = new Map();
      gaps = new Uint32Array(4000);
      recording = true;
      return null;
    }
    recording = false;
    const pct = (p: number, hist: Uint32Array, scale: number): number =>
      histogramPercentile(hist, p) / scale;
    const dev = new Uint32Array(4000);
    gaps.forEach((count, bin) => (dev[Math.round(Math.abs(bin / 20 - FRAME_MS) * 20)]! += count));
    const drifts: number[] = [];
    let packets = 0;
    for (const f of flows.values()) {
      packets += f.n;
      if (f.n < 150) continue; // under 3 s: too short for a slope
      const slope = (f.n * f.sxy - f.sx * f.sy) / (f.n * f.sxx - f.sx * f.sx); // ms per frame
      drifts.push((slope / FRAME_MS) * 1e6);
    }
    drifts.sort((a, b) => a - b);
    const result: EchoResult = {
      flows: flows.size,
      packets,
      gapP50: pct(0.5, gaps, 20),
      gapP99: pct(0.99, gaps, 20),
      devP99: pct(0.99, dev, 20),
      driftPpmMedian: drifts[Math.floor(drifts.length / 2)] ?? NaN,
      driftPpmMaxAbs: Math.max(...drifts.map(Math.abs)),
    };
    return result;
  });
}

// ---------- roles: bare relay (measured) and its traffic generator ----------

export async function relayRole(): Promise<void> {
  let sockets: Socket[] = [];
  let forwarded = 0;
  onCommand(async (m) => {
    if (m.cmd === 'open') {
      const sinkPort = m.sinkPort as number;
      for (let i = 0; i < (m.n as number); i++) {
        const s = await bindUdp();
        // the floor: receive a datagram, send it on; nothing else
        s.on('message', (msg) => {
          forwarded++;
          s.send(msg, sinkPort, '127.0.0.1');
        });
        sockets.push(s);
      }
      return sockets.map((s) => s.address().port);
    }
    if (m.cmd === 'measure') {
      const f0 = forwarded;
      const stop = cpuWindow();
      await sleep(m.windowMs as number);
      const result: RelayResult = { ...stop(), forwarded: forwarded - f0 };
      return result;
    }
    for (const s of sockets) s.close();
    sockets = [];
    return null;
  });
}

export async function generatorRole(): Promise<void> {
  const socket = await bindUdp(0, 8 << 20);
  let timer: NodeJS.Timeout | null = null;
  onCommand(async (m) => {
    if (m.cmd === 'port') return socket.address().port;
    if (m.cmd === 'start') {
      const ports = m.ports as number[];
      const packet = Buffer.alloc(172, 0xff);
      packet[0] = 0x80;
      const slots = 4;
      const t0 = performance.now();
      let tick = 0;
      const run = (): void => {
        while (t0 + tick * (FRAME_MS / slots) <= performance.now() + 1) {
          const slot = tick % slots;
          for (let i = slot; i < ports.length; i += slots)
            socket.send(packet, ports[i]!, '127.0.0.1');
          tick++;
        }
        timer = setTimeout(
          run,
          Math.max(0, t0 + tick * (FRAME_MS / slots) - 1 - performance.now()),
        );
      };
      run();
      return null;
    }
    if (timer) clearTimeout(timer);
    return null;
  });
}
