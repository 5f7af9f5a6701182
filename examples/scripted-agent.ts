/**
 * A scripted agent: plays a prompt, records what the callee says, hangs up.
 *
 *   npx tsx examples/scripted-agent.ts --port 8766 [--prompt prompt.ulaw]
 *     [--listen-seconds 5] [--out ./recordings]
 *
 * 1. After `start`, plays the prompt: a raw μ-law 8 kHz file, or by default
 *    three 440/660/880 Hz beeps. It sends 200 ms chunks, each followed by a
 *    mark, and waits for the last mark to come back (the prompt has played).
 * 2. Records the callee for --listen-seconds into <out>/<streamSid>.wav
 *    (16-bit PCM at the stream's rate).
 * 3. Sends our `hangup` extension; the gateway ends the call and sends `stop`.
 *
 * Works with mulaw_8000 (Twilio JSON) and the pcm_* formats (binary frames).
 * Logs counts and file names only.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '../src/logger.js';
import { decodeUlaw, encodeUlaw } from '../src/media/index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8766' },
    prompt: { type: 'string' },
    'listen-seconds': { type: 'string', default: '5' },
    out: { type: 'string', default: './recordings' },
  },
});
const listenMs = Number(values['listen-seconds']) * 1000;
const log = createLogger(process.env.LOG_LEVEL ?? 'info');
const wss = new WebSocketServer({ port: Number(values.port) });
wss.on('listening', () =>
  log.info({ port: (wss.address() as AddressInfo).port }, 'scripted agent listening'),
);
wss.on('connection', (ws) => serve(ws));

interface StartMessage {
  event: 'start';
  streamSid: string;
  start: { mediaFormat: { encoding: string; sampleRate: number } };
}

function serve(ws: WebSocket): void {
  let streamSid = '';
  let pcm = false;
  let rate = 8000;
  let phase: 'waiting' | 'playing' | 'listening' | 'done' = 'waiting';
  let lastMark = '';
  const heard: Buffer[] = [];

  const listen = (): void => {
    phase = 'listening';
    setTimeout(() => {
      phase = 'done';
      const file = join(values.out, `${streamSid || 'stream'}.wav`);
      mkdirSync(values.out, { recursive: true });
      const samples = pcm ? Buffer.concat(heard) : ulawToPcm(Buffer.concat(heard));
      const recording = wav(samples, rate);
      writeFileSync(file, recording);
      const durationMs = Math.round(((recording.length - 44) / 2 / rate) * 1000);
      log.info({ streamSid, file, durationMs }, 'recording written');
      ws.send(JSON.stringify({ event: 'hangup', streamSid, hangup: { reason: 'script_done' } }));
    }, listenMs);
  };

  ws.on('message', (data: Buffer, isBinary) => {
    if (isBinary) {
      if (phase === 'listening') heard.push(Buffer.from(data));
      return;
    }
    let msg: { event?: string; media?: { payload?: string }; mark?: { name?: string } };
    try {
      msg = JSON.parse(data.toString('utf8')) as typeof msg;
    } catch {
      return;
    }
    if (msg.event === 'start') {
      const start = msg as StartMessage;
      streamSid = start.streamSid;
      pcm = start.start.mediaFormat.encoding !== 'audio/x-mulaw';
      rate = start.start.mediaFormat.sampleRate;
      phase = 'playing';
      lastMark = play(ws, streamSid, pcm, rate);
      log.info({ streamSid, pcm, rate }, 'playing prompt');
    } else if (msg.event === 'media' && phase === 'listening' && msg.media?.payload) {
      heard.push(Buffer.from(msg.media.payload, 'base64'));
    } else if (msg.event === 'mark' && phase === 'playing' && msg.mark?.name === lastMark) {
      log.info({ streamSid }, 'prompt played; listening');
      listen();
    } else if (msg.event === 'stop') {
      log.info({ streamSid }, 'stream stopped');
    }
  });
}

/** Sends the prompt in 200 ms chunks, each followed by a mark; returns the last mark's name. */
function play(ws: WebSocket, streamSid: string, pcm: boolean, rate: number): string {
  const audio = promptAudio(rate);
  const chunk = rate / 5; // samples in 200 ms
  let name = '';
  for (let i = 0, n = 0; i < audio.length; i += chunk, n += 1) {
    const part = audio.subarray(i, i + chunk);
    if (pcm) {
      ws.send(Buffer.from(part.buffer, part.byteOffset, part.byteLength), { binary: true });
    } else {
      const ulaw = new Uint8Array(part.length);
      encodeUlaw(part, ulaw);
      const payload = Buffer.from(ulaw).toString('base64');
      ws.send(JSON.stringify({ event: 'media', streamSid, media: { payload } }));
    }
    name = `prompt-${n}`;
    ws.send(JSON.stringify({ event: 'mark', streamSid, mark: { name } }));
  }
  return name;
}

/** The --prompt file (raw μ-law 8 kHz; for PCM streams only at 8 kHz), or three beeps. */
function promptAudio(rate: number): Int16Array {
  if (values.prompt !== undefined && rate === 8000) return ulawToPcm(readFileSync(values.prompt));
  const out = new Int16Array(Math.round(rate * 1.8));
  [440, 660, 880].forEach((hz, k) => {
    const from = Math.round(rate * 0.6 * k);
    for (let i = 0; i < rate * 0.4; i += 1) {
      out[from + i] = Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / rate));
    }
  });
  return out;
}

function ulawToPcm(ulaw: Buffer): Int16Array {
  const out = new Int16Array(ulaw.length);
  decodeUlaw(ulaw, out);
  return out;
}

/** A 16-bit mono PCM WAV file. */
function wav(samples: Int16Array | Buffer, rate: number): Buffer {
  const data = Buffer.isBuffer(samples)
    ? samples
    : Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
