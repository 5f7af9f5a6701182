// The load run's AI agent: a Twilio Media Streams echo (like
// examples/echo-agent.ts) that also reads the RTP probe's stamps (RTP → agent
// latency) and rewrites them with its own send time before echoing, so the
// probe can measure agent → RTP. Counts streams and frames; logs nothing.
//
//   started by the runner: fork(stamp-agent.ts) → IPC { ready, port }
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';
import { serveParent } from './child-role.js';
import { BinnedHistogram } from './stats.js';
import { AGENT_MAGIC, FAR_END_MAGIC, findStamp, nowNs, writeStamp } from './stamp.js';

const rtpToAgent = new BinnedHistogram(0.1, 2000);
const loop = monitorEventLoopDelay({ resolution: 5 });
const counts = { connections: 0, open: 0, started: 0, stopped: 0, mediaIn: 0, binaryIn: 0 };
loop.enable();

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (ws) => serve(ws));

function serve(ws: WebSocket): void {
  counts.connections++;
  counts.open++;
  let streamSid = '';
  ws.on('close', () => counts.open--);
  ws.on('message', (data: Buffer, isBinary) => {
    if (isBinary) {
      counts.binaryIn++;
      ws.send(data, { binary: true });
      return;
    }
    let msg: { event?: string; streamSid?: string; media?: { payload?: string } };
    try {
      msg = JSON.parse(data.toString('utf8')) as typeof msg;
    } catch {
      return;
    }
    if (msg.event === 'start') {
      counts.started++;
      streamSid = msg.streamSid ?? '';
    } else if (msg.event === 'stop') {
      counts.stopped++;
    } else if (msg.event === 'media' && typeof msg.media?.payload === 'string') {
      counts.mediaIn++;
      let payload = msg.media.payload;
      const frame = Buffer.from(payload, 'base64');
      const stamp = findStamp(frame, FAR_END_MAGIC);
      if (stamp) {
        const now = nowNs();
        rtpToAgent.add(Number(now - stamp[1]) / 1e6);
        writeStamp(frame, stamp[0], AGENT_MAGIC, nowNs());
        payload = frame.toString('base64');
      }
      ws.send(JSON.stringify({ event: 'media', streamSid, media: { payload } }));
    }
  });
}

function stats(reset: boolean): unknown {
  const result = {
    ...counts,
    rtpToAgentMs: rtpToAgent.summary(),
    agentLoopP99Ms: loop.percentile(99) / 1e6,
  };
  if (reset) {
    rtpToAgent.reset();
    loop.reset();
  }
  return result;
}

serveParent((m) => (m.cmd === 'stats' ? stats(m.reset === true) : { error: 'unknown' }));
wss.on('listening', () =>
  process.send?.({ ready: true, port: (wss.address() as AddressInfo).port }),
);
