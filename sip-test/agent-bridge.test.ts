// Issue 6: the started daemon bridges answered calls to WebSocket agents (test
// agents on loopback) while SIPp plays the callee, mostly with -rtp_echo so
// what the agent says comes back to it as the callee's audio.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentServer, waitUntil, type AgentSession } from '../test/agents/agent-server.js';
import { startPipecatLikeAgent } from '../test/agents/pipecat-like-agent.js';
import { startVocodeLikeAgent } from '../test/agents/vocode-like-agent.js';
import { allocatePort, startSipp, type SippProcess } from './runner/sipp-runner.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

let gw: Gateway;
const sipps: SippProcess[] = [];
const servers: AgentServer[] = [];
let n = 0;
const number = () => `+1212555${String(6000 + n++).padStart(4, '0')}`;

async function farEnd(scenario: string, rtpEcho: boolean, timeoutSec = 20): Promise<SippProcess> {
  const extraArgs = ['-mp', String(await allocatePort())];
  if (rtpEcho) extraArgs.push('-rtp_echo');
  const sipp = await startSipp({ scenario, timeoutSec, extraArgs });
  sipps.push(sipp);
  return sipp;
}

async function agentAt(server: AgentServer, audioFormat = 'mulaw_8000'): Promise<string> {
  servers.push(server);
  const res = await gw.api('POST', '/api/v1/agents', {
    name: `bridge-${n}`,
    websocketUrl: server.url,
    audioFormat,
    prompt: 'Call {{name}}.',
    outgoing: { ringTimeoutSeconds: 5, maxDurationSeconds: 15 },
  });
  if (res.status !== 201) throw new Error(`agent: ${JSON.stringify(res.json)}`);
  return res.json.id as string;
}

/** Deterministic μ-law bytes far from silence (no 0xFF / 0x7F). */
function pattern(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  let s = seed;
  for (let i = 0; i < bytes; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out[i] = (s >> 8) & 0x5f; // small magnitude codes: loud
  }
  return out;
}

function sendMedia(session: AgentSession, streamSid: string, audio: Buffer): void {
  session.send({ event: 'media', streamSid, media: { payload: audio.toString('base64') } });
}

function marksOf(session: AgentSession): string[] {
  return session.messages
    .filter((m) => m.event === 'mark')
    .map((m) => (m.mark as { name: string }).name);
}

beforeAll(async () => {
  gw = await startGateway();
}, 30_000);
afterAll(async () => {
  for (const s of sipps) s.kill();
  await Promise.all(servers.map((s) => s.close()));
  await gw?.stop();
  // The per-call latency the daemon logged when each agent stream closed.
  const lines = gw.daemon
    .output()
    .split('\n')
    .filter((l) => l.includes('"msg":"agent stream closed"'))
    .map((l) => (JSON.parse(l) as { latencyMs: Record<string, number> }).latencyMs);
  console.log('agent bridge latency per call (ms, histogram bucket bounds):');
  for (const l of lines) console.log(JSON.stringify(l));
}, 30_000);

describe('agent bridge through the daemon (SIPp callee)', () => {
  it('μ-law echo byte for byte, marks in order and flushed by clear, agent DTMF out and back, transcript, result, hangup → BYE', async () => {
    const server = await AgentServer.listen();
    const agentId = await agentAt(server);
    const sipp = await farEnd('uas-200-te-echo-agent-bye.xml', true);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), {
      agentId,
      dynamicVariables: { name: 'Ana' },
    });
    const session = await server.session(0);
    const start = await session.started(10_000);
    expect(start.start).toMatchObject({
      callSid: callId,
      customParameters: { name: 'Ana' },
      call: { prompt: 'Call Ana.', direction: 'outbound', toNumber: expect.any(String) },
    });
    await session.waitForEvent('media');

    // 1 s of known audio, then a mark: the mark comes back once it has played,
    // and the audio comes back through the echo, unchanged.
    const known = pattern(8000, 42);
    for (let off = 0; off < known.length; off += 1600) {
      sendMedia(session, start.streamSid, known.subarray(off, off + 1600));
    }
    session.send({ event: 'mark', streamSid: start.streamSid, mark: { name: 'm1' } });
    const sentAt = Date.now();
    await session.waitFor((m) => m.event === 'mark', 5000);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(800); // played at 20 ms a packet
    await waitUntil(() => session.inboundAudio().indexOf(known) >= 0, 3000);

    // 3 s queued with two marks, then clear: both marks answered at once, in order.
    sendMedia(session, start.streamSid, pattern(24000, 7));
    session.send({ event: 'mark', streamSid: start.streamSid, mark: { name: 'c1' } });
    session.send({ event: 'mark', streamSid: start.streamSid, mark: { name: 'c2' } });
    await new Promise((r) => setTimeout(r, 200));
    const clearedAt = Date.now();
    session.send({ event: 'clear', streamSid: start.streamSid });
    await waitUntil(() => marksOf(session).length === 3, 1000);
    expect(Date.now() - clearedAt).toBeLessThan(500);
    expect(marksOf(session)).toEqual(['m1', 'c1', 'c2']);

    // The agent's DTMF goes out as RFC 4733, SIPp echoes the events back, and
    // the daemon reports them to the agent as the callee's keys.
    session.send({ event: 'sendDtmf', sendDtmf: { digits: '19#' } });
    await waitUntil(() => session.messages.filter((m) => m.event === 'dtmf').length >= 3, 5000);
    const digits = session.messages
      .filter((m) => m.event === 'dtmf')
      .map((m) => (m.dtmf as { digit: string }).digit);
    expect(digits).toEqual(['1', '9', '#']);

    session.send({ event: 'transcript', transcript: { role: 'agent', content: 'Hello Ana' } });
    session.send({ event: 'transcript', transcript: { role: 'user', content: 'Hi' } });
    session.send({
      event: 'result',
      result: {
        summary: 'Greeted.',
        shortSummary: 'Greeting',
        postAnalysisResults: { greeted: true },
        outboundResult: { humanResponded: true },
        funnelStatus: 'resolved',
      },
    });
    session.send({ event: 'hangup', hangup: { reason: 'done' } });
    const rec = await gw.waitFor(callId);
    expect((await sipp.done).code).toBe(0); // SIPp got our BYE
    expect(rec).toMatchObject({
      status: 'answered',
      endCallReason: 'user_hungup',
      summary: 'Greeted.',
      shortSummary: 'Greeting',
      postAnalysisResults: { greeted: true },
      outboundResult: { humanResponded: true },
      analysedByAi: 'completed',
      funnelStatus: 'resolved',
    });
    expect(rec.messages.map((m: any) => [m.role, m.content])).toEqual([
      ['Agent', 'Hello Ana'],
      ['Contact', 'Hi'],
    ]);
    expect((await session.closed).code).toBe(1000);
    expect(session.messages.at(-1)?.event).toBe('stop');
  }, 40_000);

  it('DTMF from a SIPp pcap (RFC 2833 digit 1) reaches the agent; its hangup ends the call', async () => {
    const server = await AgentServer.listen((s) => {
      void s
        .waitForEvent('dtmf', 10_000)
        .then(() => s.send({ event: 'hangup' }))
        .catch(() => undefined);
    });
    const agentId = await agentAt(server);
    const sipp = await farEnd('uas-200-dtmf-pcap-agent-bye.xml', false);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId });
    const rec = await gw.waitFor(callId);
    const session = await server.session(0);
    const dtmf = session.messages.filter((m) => m.event === 'dtmf');
    expect(dtmf.map((m) => (m.dtmf as { digit: string }).digit)).toEqual(['1']);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect((await sipp.done).code).toBe(0);
  }, 30_000);

  it('L16 16 kHz round trip: a 1 kHz tone sent as PCM comes back as a 1 kHz tone', async () => {
    const server = await AgentServer.listen();
    const agentId = await agentAt(server, 'pcm_16000');
    const sipp = await farEnd('uas-200-te-echo-agent-bye.xml', true);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId });
    const session = await server.session(0);
    const start = await session.started(10_000);
    expect(start.start).toMatchObject({
      mediaFormat: { encoding: 'audio/x-pcm-s16le', sampleRate: 16000 },
    });
    const tone = new Int16Array(16000).map((_, i) =>
      Math.round(10000 * Math.sin((2 * Math.PI * 1000 * i) / 16000)),
    );
    const bytes = Buffer.from(tone.buffer);
    for (let off = 0; off < bytes.length; off += 640) {
      session.ws.send(bytes.subarray(off, off + 640), { binary: true });
    }
    session.send({ event: 'mark', streamSid: start.streamSid, mark: { name: 'tone' } });
    await session.waitFor((m) => m.event === 'mark', 5000);
    await new Promise((r) => setTimeout(r, 300));
    session.send({ event: 'hangup' });
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });

    const all = Buffer.concat(session.binaryFrames);
    expect(session.binaryFrames[0]?.length).toBe(640);
    const pcm = new Int16Array(all.buffer, all.byteOffset, all.length >> 1);
    let loudWindows = 0;
    let crossings = 0;
    for (let w = 0; w + 320 <= pcm.length; w += 320) {
      let sum = 0;
      for (let i = w; i < w + 320; i++) sum += pcm[i]! * pcm[i]!;
      if (Math.sqrt(sum / 320) < 3000) continue;
      loudWindows += 1;
      for (let i = w + 1; i < w + 320; i++) if (pcm[i - 1]! < 0 !== pcm[i]! < 0) crossings += 1;
    }
    // ~1 s of tone came back (50 windows of 20 ms), at 1 kHz (2 crossings a period).
    expect(loudWindows).toBeGreaterThanOrEqual(40);
    const hz = crossings / 2 / ((loudWindows * 319) / 16000);
    expect(hz).toBeGreaterThan(950);
    expect(hz).toBeLessThan(1050);
  }, 30_000);

  it('the agent socket dropping mid-call ends it: BYE, failed_during_call / agent_disconnected', async () => {
    const server = await AgentServer.listen((s) => {
      void s
        .started(10_000)
        .then(() => setTimeout(() => s.ws.terminate(), 300))
        .catch(() => undefined);
    });
    const agentId = await agentAt(server);
    const sipp = await farEnd('uas-200-te-echo-agent-bye.xml', true);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId });
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({
      status: 'failed_during_call',
      endCallReason: 'user_hungup',
      endDetail: 'agent_disconnected',
    });
    expect((await sipp.done).code).toBe(0);
  }, 30_000);

  it('agent down (connection refused): no INVITE, failed / agent_not_found, agent_unreachable', async () => {
    const sipp = await farEnd('uas-200-wait-bye-from-us.xml', false, 4);
    const down = await gw.api('POST', '/api/v1/agents', {
      name: 'down',
      websocketUrl: 'ws://127.0.0.1:9/agent', // discard port: connection refused
    });
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId: down.json.id });
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({
      status: 'failed',
      endCallReason: 'agent_not_found',
      endDetail: 'agent_unreachable',
    });
    const result = await sipp.done; // its timeout: nothing ever came
    expect(result.messages).not.toMatch(/INVITE sip:/);
  }, 30_000);

  it('the Vocode-like agent plays its chunks, each mark answered after it played, then hangs up', async () => {
    const chunks = [0, 1, 2, 3, 4].map((i) => pattern(1600, 100 + i)); // 5 × 200 ms
    const { server, calls } = await startVocodeLikeAgent({ chunks });
    const agentId = await agentAt(server);
    const sipp = await farEnd('uas-200-te-echo-agent-bye.xml', true);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId });
    await waitUntil(() => calls.length === 1, 10_000);
    const call = calls[0]!;
    await call.session.started(10_000);
    const t0 = Date.now();
    await call.done;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(call.timeline.map((e) => `${e.kind}:${e.name}`)).toEqual(
      chunks.flatMap((_, i) => [`sent-chunk:chunk-${i}`, `mark-acked:chunk-${i}`]),
    );
    // Every chunk came back through the echo.
    await waitUntil(() => chunks.every((c) => call.session.inboundAudio().indexOf(c) >= 0), 3000);
    call.session.send({ event: 'hangup' });
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect((await sipp.done).code).toBe(0);
  }, 30_000);

  it('the Pipecat-like agent streams unpaced, interrupts itself on the echoed speech with clear, the rest is dropped', async () => {
    const audio = pattern(24000, 9); // 3 s of speech, sent at once
    const { server, calls } = await startPipecatLikeAgent({
      audio,
      interruptAfterSpeechFrames: 10,
    });
    const agentId = await agentAt(server);
    const sipp = await farEnd('uas-200-te-echo-agent-bye.xml', true);
    const callId = await gw.call(await gw.trunk(sipp.port), number(), { agentId });
    await waitUntil(() => calls.length === 1, 10_000);
    const call = calls[0]!;
    await call.streamed;
    await waitUntil(() => call.clears() === 1, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    // Speech that came back: about 10 frames before the clear plus what was in
    // flight, far from the 150 frames of the whole 3 s.
    const speechBytes = [...call.session.inboundAudio()].filter((b) => (b & 0x7f) < 0x60).length;
    expect(speechBytes / 160).toBeGreaterThan(8);
    expect(speechBytes / 160).toBeLessThan(60);
    call.session.send({ event: 'hangup' });
    const rec = await gw.waitFor(callId);
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'user_hungup' });
    expect((await sipp.done).code).toBe(0);
  }, 30_000);
});
