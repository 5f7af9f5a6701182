// The daemon's agent client against an agent that paces itself by marks, as Vocode does.
import { afterEach, describe, expect, it } from 'vitest';
import { AgentConnection } from '../../src/agent/index.js';
import { waitUntil, type AgentServer } from './agent-server.js';
import { startVocodeLikeAgent } from './vocode-like-agent.js';

let server: AgentServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chunk = (i: number): Buffer => Buffer.alloc(800, 0x20 + i); // 100 ms each

describe('vocode-like agent', () => {
  it('gets every mark back after its chunk, and sends the next chunk only then', async () => {
    const started = await startVocodeLikeAgent({ chunks: [0, 1, 2, 3].map(chunk) });
    server = started.server;
    const conn = await AgentConnection.connect({
      url: server.url,
      callSid: 'call-v',
      accountSid: 'co',
      connectTimeoutMs: 2000,
    });
    // Plays the role of the lead's bridge: queue audio, echo each mark once "played".
    const played: string[] = [];
    conn.on('audio', (a) => played.push(`audio:${a.payload[0]!.toString(16)}`));
    conn.on('mark', (name) => {
      played.push(`mark:${name}`);
      setTimeout(() => conn.sendMark(name), 5);
    });
    conn.start();
    conn.sendAudio(Buffer.alloc(160, 0xff));

    const call = started.calls[0]!;
    await call.done;
    expect(played).toEqual([
      'audio:20',
      'mark:chunk-0',
      'audio:21',
      'mark:chunk-1',
      'audio:22',
      'mark:chunk-2',
      'audio:23',
      'mark:chunk-3',
    ]);
    // Strict alternation on the agent's side: sent i, acked i, sent i+1, ...
    expect(call.timeline.map((t) => `${t.kind}:${t.name}`)).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`sent-chunk:chunk-${i}`, `mark-acked:chunk-${i}`]),
    );
    const echoed = call.session.messages.filter((m) => m.event === 'mark');
    for (const m of echoed) {
      expect(typeof m.sequenceNumber).toBe('string');
      expect(m.streamSid).toBe(conn.streamSid);
    }
    expect(call.session.inboundAudio()).toEqual(Buffer.alloc(160, 0xff));
    await conn.stop();
    expect(await call.session.closed).toEqual({ code: 1000, reason: 'stop' });
  });

  it('stalls (no next chunk) while a mark is not echoed', async () => {
    const started = await startVocodeLikeAgent({ chunks: [0, 1].map(chunk), markTimeoutMs: 300 });
    server = started.server;
    const conn = await AgentConnection.connect({ url: server.url, callSid: 'c', accountSid: 'a' });
    const audio: number[] = [];
    conn.on('audio', (a) => audio.push(a.payload[0]!));
    conn.start();
    await expect(started.calls[0]!.done).rejects.toThrow();
    expect(audio).toEqual([0x20]);
    await conn.close();
  });

  it('on clear, the bridge echoes the dropped marks (as the media layer reports them)', async () => {
    const started = await startVocodeLikeAgent({ chunks: [chunk(0)], markTimeoutMs: 3000 });
    server = started.server;
    const conn = await AgentConnection.connect({ url: server.url, callSid: 'c', accountSid: 'a' });
    const pending: string[] = [];
    conn.on('mark', (name) => pending.push(name)); // queued, not played yet
    conn.on('clear', () => {
      for (const name of pending.splice(0)) conn.sendMark(name);
    });
    conn.start();
    await waitUntil(() => pending.length === 1);
    started.calls[0]!.interrupt();
    await started.calls[0]!.done;
    expect(conn.counters.clearsReceived).toBe(1);
    await conn.close();
  });
});
