/**
 * A Twilio Media Streams echo agent: plays the callee's own audio back.
 *
 *   npx tsx examples/echo-agent.ts --port 8765
 *   (agent record: websocketUrl ws://127.0.0.1:8765/, audioFormat mulaw_8000 or pcm_*)
 *
 * Every `media` payload (or binary PCM frame) goes straight back; every
 * second of echoed audio it also sends a `mark` and counts the marks the
 * gateway returns once that audio has played. It logs counts only: no
 * numbers, no audio, no call context.
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '../src/logger.js';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8765' } } });
const log = createLogger(process.env.LOG_LEVEL ?? 'info');
const wss = new WebSocketServer({ port: Number(values.port) });

wss.on('listening', () =>
  log.info({ port: (wss.address() as AddressInfo).port }, 'echo agent listening'),
);
wss.on('connection', (ws) => serve(ws));

function serve(ws: WebSocket): void {
  let streamSid = '';
  let echoed = 0;
  let marksSent = 0;
  let marksPlayed = 0;
  const sendMarkEverySecond = (): void => {
    echoed += 1;
    if (echoed % 50 !== 0) return;
    marksSent += 1;
    ws.send(JSON.stringify({ event: 'mark', streamSid, mark: { name: `echo-${marksSent}` } }));
  };

  ws.on('message', (data: Buffer, isBinary) => {
    if (isBinary) {
      ws.send(data, { binary: true }); // PCM formats: audio is binary both ways
      sendMarkEverySecond();
      return;
    }
    let msg: { event?: string; streamSid?: string; media?: { payload?: string } };
    try {
      msg = JSON.parse(data.toString('utf8')) as typeof msg;
    } catch {
      return;
    }
    switch (msg.event) {
      case 'start':
        streamSid = msg.streamSid ?? '';
        log.info({ streamSid }, 'stream started');
        break;
      case 'media':
        if (typeof msg.media?.payload !== 'string') return;
        ws.send(
          JSON.stringify({ event: 'media', streamSid, media: { payload: msg.media.payload } }),
        );
        sendMarkEverySecond();
        break;
      case 'mark':
        marksPlayed += 1;
        break;
      case 'stop':
        log.info({ streamSid, echoedFrames: echoed, marksSent, marksPlayed }, 'stream stopped');
        break;
    }
  });
  ws.on('close', (code) => log.info({ streamSid, code }, 'connection closed'));
}
