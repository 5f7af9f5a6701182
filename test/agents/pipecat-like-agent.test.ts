// The daemon's agent client against an agent that streams without marks and
// interrupts with clear, as Pipecat's Twilio serializer does.
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../src/agent/index.js';
import { waitUntil, type AgentServer } from './agent-server.js';
import { startPipecatLikeAgent } from './pipecat-like-agent.js';

let server: AgentServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('pipecat-like agent', () => {
  it('streams 1 s of audio as 50 media messages; never a mark', async () => {
    const audio = Buffer.from(Array.from({ length: 8000 }, (_, i) => i & 0xff));
    const started = await startPipecatLikeAgent({ audio });
    server = started.server;
    const conn = await AgentConnection.connect({ url: server.url, callSid: 'c', accountSid: 'a' });
    const parts: Buffer[] = [];
    conn.on('audio', (a) => parts.push(a.payload));
    conn.start();
    await started.calls[0]!.streamed;
    await waitUntil(() => parts.length === 50);
    expect(Buffer.concat(parts)).toEqual(audio);
    expect(parts.every((p) => p.length === 160)).toBe(true);
    expect(conn.counters.marksReceived).toBe(0);
    await conn.stop();
  });

  it('interrupts with clear when it hears the callee speak', async () => {
    const started = await startPipecatLikeAgent({
      audio: Buffer.alloc(16000, 0x55),
      interruptAfterSpeechFrames: 3,
    });
    server = started.server;
    const conn = await AgentConnection.connect({ url: server.url, callSid: 'c', accountSid: 'a' });
    let clears = 0;
    conn.on('clear', () => (clears += 1));
    conn.start();
    for (let i = 0; i < 2; i += 1) conn.sendAudio(Buffer.alloc(160, 0xff)); // silence
    for (let i = 0; i < 3; i += 1) conn.sendAudio(Buffer.alloc(160, 0x10)); // loud
    await waitUntil(() => clears === 1);
    expect(started.calls[0]!.clears()).toBe(1);
    await conn.stop();
  });
});
