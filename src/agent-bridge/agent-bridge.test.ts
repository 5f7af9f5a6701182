// AgentBridge against a real WebSocket agent (test/agents) and a fake media leg.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentServer, waitUntil, type AgentSession } from '../../test/agents/agent-server.js';
import { AccountService } from '../accounts/account-service.js';
import { LatencyHistogram } from '../agent/index.js';
import { ManualClock } from '../clock.js';
import type { CallRecord } from '../model/call-record.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import type {
  AgentReport,
  AgentTranscriptLine,
  AgentTransferRequest,
  ConsultAction,
  VoicemailVerdict,
} from '../calls/ports/agent-link.js';
import { openDatabase } from '../store/database.js';
import type { Agent, AgentAudioFormat } from '../model/entities.js';
import { createStore, type Store } from '../store/store.js';
import { AgentBridge } from './agent-bridge.js';
import type { MediaLeg, ReceivedFrame } from '../calls/ports/media-port.js';

class FakeMedia extends EventEmitter {
  readonly localPort = 40000;
  readonly localAddress = '127.0.0.1';
  audioHandler: ((f: ReceivedFrame) => void) | undefined;
  enqueued: { audio: Uint8Array | Int16Array; sampleRate: number | undefined }[] = [];
  marks: string[] = [];
  dtmfSent: string[] = [];
  queuedMarks: string[] = [];
  onAudio(h: (f: ReceivedFrame) => void): void {
    this.audioHandler = h;
  }
  enqueue(audio: Uint8Array | Int16Array, sampleRate?: number): number {
    this.enqueued.push({ audio, sampleRate });
    return 20;
  }
  mark(name: string): void {
    this.marks.push(name);
    this.queuedMarks.push(name);
  }
  clear(): { droppedMs: number; droppedMarks: string[] } {
    const droppedMarks = this.queuedMarks;
    this.queuedMarks = [];
    return { droppedMs: 40, droppedMarks };
  }
  sendDtmf(digits: string): void {
    this.dtmfSent.push(digits);
  }
  /** The playout reached the oldest queued mark. */
  play(): void {
    const name = this.queuedMarks.shift();
    if (name) this.emit('mark', name);
  }
  frame(ulaw: Buffer, mediaTimeMs: number): void {
    this.audioHandler?.({ ulaw, mediaTimeMs, receivedAt: performance.now() });
  }
}

const log = pino({ level: 'silent' });
let store: Store;
let clock: ManualClock;
let server: AgentServer;
let companyId: string;
let bridges: AgentBridge[];

function agentRecord(format: AgentAudioFormat, extra: Partial<Agent['outgoing']> = {}): Agent {
  const now = new Date(clock.now()).toISOString();
  return store.agents.insert({
    id: `a-${format}-${Math.random()}`,
    companyId,
    createdAt: now,
    modifiedAt: now,
    name: 'a',
    websocketUrl: server.url,
    audioFormat: format,
    prompt: 'Call {{name}} about {{due}}.',
    welcomeMessage: 'Hello from Acme.',
    language: null,
    version: 3,
    outgoing: {
      ringTimeoutSeconds: null,
      maxDurationSeconds: null,
      recordingEnabled: true,
      voicemailDetection: false,
      ...extra,
    },
  }) as Agent;
}

function callRecord(extra: Partial<CallRecord> = {}): CallRecord {
  const now = new Date(clock.now()).toISOString();
  return store.calls.insert(
    callRecordFixture({
      id: `r-${Math.random()}`,
      callId: `c-${Math.random()}`,
      companyId,
      phoneNumber: '+12125550199',
      status: 'in_call',
      createdAt: now,
      modifiedAt: now,
      callerId: '+12125550100',
      dynamicVariables: { name: 'Ana' },
      superVariables: { due: { placeholder: '{{due}}', value: 'July 1st', type: 'text' } },
      contextForAi: 'Asked for a callback.',
      metadata: { crm: '9' },
      isWelcomeMessageAIGenerated: false,
      welcomeMessageOverride: 'Hi Ana!',
      recordingEnabled: true,
      messages: [],
      totalCost: 0.1,
      attempts: [{ number: '+12125550199', round: 1, startedAt: now, answeredAt: now }],
      ...extra,
    }),
  );
}

interface Reports {
  transcripts: AgentTranscriptLine[];
  results: AgentReport[];
  verdicts: VoicemailVerdict[];
  transfers: AgentTransferRequest[];
  consults: ConsultAction[];
}

async function started(
  format: AgentAudioFormat = 'mulaw_8000',
  opts: { agent?: Partial<Agent['outgoing']>; record?: Partial<CallRecord> } = {},
): Promise<{
  bridge: AgentBridge;
  media: FakeMedia;
  session: AgentSession;
  hangups: string[];
  reports: Reports;
  record: CallRecord;
}> {
  const record = callRecord(opts.record);
  const bridge = new AgentBridge(record, agentRecord(format, opts.agent), {
    clock,
    log,
    stopGraceMs: 300,
    latency: { rtpToWs: new LatencyHistogram(), wsToRtp: new LatencyHistogram() },
  });
  bridges.push(bridge);
  await bridge.connect();
  const session = await server.session(
    server.sessions.length === 0 ? 0 : server.sessions.length - 1,
  );
  const media = new FakeMedia();
  const hangups: string[] = [];
  const reports: Reports = {
    transcripts: [],
    results: [],
    verdicts: [],
    transfers: [],
    consults: [],
  };
  bridge.start(media as unknown as MediaLeg, {
    hangup: (r) => hangups.push(r),
    transcript: (t) => reports.transcripts.push(t),
    result: (r) => reports.results.push(r),
    voicemail: (v) => reports.verdicts.push(v),
    transfer: (t) => reports.transfers.push(t),
    consult: (a) => reports.consults.push(a),
  });
  await session.started();
  return { bridge, media, session, hangups, reports, record };
}

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 0, 5, 12, 0, 0));
  store = createStore(openDatabase(':memory:'));
  companyId = new AccountService(store, clock).createCompany('acme', null, {}).id;
  bridges = [];
  server = await AgentServer.listen();
});
afterEach(async () => {
  await Promise.all(bridges.map((b) => b.stop()));
  await server.close();
});

describe('AgentBridge', () => {
  it('connects with the call context: prompt rendered plus contextForAi, welcome override, numbers', async () => {
    const { session, record } = await started();
    expect(session.messages[0]?.event).toBe('connected');
    const start = (await session.started()).start;
    expect(start).toMatchObject({
      callSid: record.callId,
      accountSid: companyId,
      customParameters: { name: 'Ana' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 },
      call: {
        agentVersion: 3,
        prompt: 'Call Ana about July 1st.\n\nAsked for a callback.',
        contextForAi: 'Asked for a callback.',
        welcomeMessage: 'Hi Ana!',
        isWelcomeMessageAIGenerated: false,
        metadata: { crm: '9' },
        fromNumber: '+12125550100',
        toNumber: '+12125550199',
        direction: 'outbound',
      },
    });
  });

  it('rejects connect when the agent is unreachable', async () => {
    const record = callRecord();
    const agent = { ...agentRecord('mulaw_8000'), websocketUrl: 'ws://127.0.0.1:9/agent' };
    const bridge = new AgentBridge(record, agent, { clock, log });
    await expect(bridge.connect()).rejects.toMatchObject({ code: 'agent_unreachable' });
    await bridge.stop();
  });

  it('times the WebSocket set-up of each connection that opened, on the monotonic clock', async () => {
    let now = 0;
    const monotonic = { now: () => (now += 7) };
    const connect = new LatencyHistogram([5, 10, 20]);
    const latency = { rtpToWs: new LatencyHistogram(), wsToRtp: new LatencyHistogram(), connect };
    const opened = new AgentBridge(callRecord(), agentRecord('mulaw_8000'), {
      clock,
      log,
      monotonic,
      latency,
    });
    bridges.push(opened);
    await opened.connect();
    expect(connect.snapshot()).toMatchObject({ count: 1, sumMs: 7, counts: [0, 1, 0, 0] });
    const refused = new AgentBridge(
      callRecord(),
      { ...agentRecord('mulaw_8000'), websocketUrl: 'ws://127.0.0.1:9/agent' },
      { clock, log, monotonic, latency },
    );
    await expect(refused.connect()).rejects.toMatchObject({ code: 'agent_unreachable' });
    expect(connect.snapshot().count).toBe(1);
  });
  it('μ-law: callee frames go as is, agent audio is queued as is, marks echo once played', async () => {
    const { media, session } = await started();
    const frame = Buffer.alloc(160, 0x2a);
    media.frame(frame, 0);
    media.frame(Buffer.alloc(160, 0x2b), 20);
    await waitUntil(() => session.inboundAudio().length === 320);
    expect(session.inboundAudio().subarray(0, 160)).toEqual(frame);
    const sent = Buffer.alloc(400, 0x11);
    session.send({ event: 'media', media: { payload: sent.toString('base64') } });
    session.send({ event: 'mark', mark: { name: 'm1' } });
    session.send({ event: 'mark', mark: { name: 'm2' } });
    await waitUntil(() => media.marks.length === 2);
    expect(Buffer.from(media.enqueued[0]!.audio)).toEqual(sent);
    expect(media.marks).toEqual(['m1', 'm2']);
    expect(session.messages.some((m) => m.event === 'mark')).toBe(false);
    media.play();
    const echoed = await session.waitForEvent('mark');
    expect(echoed.mark).toEqual({ name: 'm1' });
  });

  it('clear drops the queue and answers every dropped mark, in order', async () => {
    const { media, session } = await started();
    for (const name of ['a', 'b', 'c']) session.send({ event: 'mark', mark: { name } });
    await waitUntil(() => media.marks.length === 3);
    media.play(); // 'a' played
    session.send({ event: 'clear' });
    await waitUntil(() => session.messages.filter((m) => m.event === 'mark').length === 3);
    const names = session.messages
      .filter((m) => m.event === 'mark')
      .map((m) => (m.mark as { name: string }).name);
    expect(names).toEqual(['a', 'b', 'c']);
  });

  it('DTMF both ways: RFC 4733 and SIP INFO digits to the agent; agent digits to the media leg with pauses', async () => {
    const { bridge, media, session } = await started();
    media.emit('dtmf', { digit: '5' });
    bridge.dtmf('#');
    await waitUntil(() => session.messages.filter((m) => m.event === 'dtmf').length === 2);
    const digits = session.messages
      .filter((m) => m.event === 'dtmf')
      .map((m) => (m.dtmf as { digit: string }).digit);
    expect(digits).toEqual(['5', '#']);
    const t0 = Date.now();
    session.send({ event: 'sendDtmf', sendDtmf: { digits: '12w3' } });
    await waitUntil(() => media.dtmfSent.length === 2);
    expect(media.dtmfSent).toEqual(['12', '3']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
  });

  it('agent hangup → user_hungup; the socket closing mid-call → agent_disconnected', async () => {
    const a = await started();
    a.session.send({ event: 'hangup', hangup: { reason: 'done' } });
    await waitUntil(() => a.hangups.length === 1);
    expect(a.hangups).toEqual(['user_hungup']);
    const b = await started();
    b.session.ws.close(1011, 'crash');
    await waitUntil(() => b.hangups.length === 1);
    expect(b.hangups).toEqual(['agent_disconnected']);
  });

  it('transfer: the request reaches the session (older field names too); progress goes back as transfer events', async () => {
    const { session, bridge, reports } = await started();
    session.send({
      event: 'transfer',
      transfer: {
        destination: '+14155550123',
        destinationType: 'number',
        transferMode: 'blind',
        transferReason: 'billing',
        showCallerId: false,
        secondsToWaitForCallerToAnswer: 20,
      },
    });
    session.send({ event: 'transfer', to: 'sip:desk@pbx.example.com', mode: 'warm', reason: 'x' });
    session.send({ event: 'transfer', transfer: { destination: '+1', transferMode: 'sideways' } });
    await waitUntil(() => reports.transfers.length === 2);
    expect(reports.transfers).toEqual([
      {
        destination: '+14155550123',
        destinationType: 'number',
        transferMode: 'blind',
        transferReason: 'billing',
        showCallerId: false,
        secondsToWaitForCallerToAnswer: 20,
      },
      { destination: 'sip:desk@pbx.example.com', transferMode: 'warm', transferReason: 'x' },
    ]);
    const base = { destination: '+14155550123', transferMode: 'blind' as const };
    bridge.transferStatus({ ...base, status: 'transferring' });
    bridge.transferStatus({
      ...base,
      status: 'pending_confirmation',
      sipStatus: 100,
      sipReason: 'Trying',
    });
    bridge.transferStatus({
      ...base,
      status: 'failed',
      reason: 'refer_refused',
      sipStatus: 405,
      sipReason: 'Method Not Allowed',
    });
    await waitUntil(() => session.messages.filter((m) => m.event === 'transfer').length === 3);
    const events = session.messages.filter((m) => m.event === 'transfer');
    expect(
      events.map((m) => (m as unknown as { transfer: { status: string } }).transfer.status),
    ).toEqual(['transferring', 'pending_confirmation', 'failed']);
    expect(events[2]).toMatchObject({
      event: 'transfer',
      streamSid: expect.any(String),
      sequenceNumber: expect.any(String),
      transfer: { ...base, status: 'failed', reason: 'refer_refused', sipStatus: 405 },
    });
    await bridge.stop();
    bridge.transferStatus({ ...base, status: 'success' }); // after stop: nothing sent
    expect(session.messages.filter((m) => m.event === 'transfer')).toHaveLength(3);
  });

  it('merge, swap and cancel reach the session as consult actions, in order; a warm consult is told with its phase and whisper', async () => {
    const { session, bridge, reports } = await started();
    for (const event of ['merge', 'swap', 'cancel']) session.send({ event, streamSid: 'x' });
    await waitUntil(() => reports.consults.length === 3);
    expect(reports.consults).toEqual(['merge', 'swap', 'cancel']);
    bridge.transferStatus({
      destination: '+14155550124',
      transferMode: 'warm',
      status: 'pending_confirmation',
      consultPhase: 'consulting_dest',
      messageToPersonWantingToBeTransferred: 'A caller about invoice 42',
    });
    const told = await session.waitForEvent('transfer');
    expect(told.transfer).toEqual({
      destination: '+14155550124',
      transferMode: 'warm',
      status: 'pending_confirmation',
      consultPhase: 'consulting_dest',
      messageToPersonWantingToBeTransferred: 'A caller about invoice 42',
    });
  });

  it('transcript and result are reported to the session as they come, in order', async () => {
    const { session, bridge, reports, record } = await started();
    session.send({ event: 'transcript', transcript: { role: 'agent', content: 'Hi Ana' } });
    session.send({
      event: 'transcript',
      transcript: { role: 'user', content: 'Stop calling', timestamp: 1500 },
    });
    const result = {
      summary: 'Asked not to be called.',
      outboundResult: { humanResponded: true, askedToNeverCallAgain: true },
      totalCost: 0.05,
    };
    session.send({ event: 'result', result });
    await waitUntil(() => reports.results.length === 1);
    await bridge.stop();
    expect(reports.transcripts).toEqual([
      { role: 'agent', content: 'Hi Ana' },
      { role: 'user', content: 'Stop calling', timestamp: 1500 },
    ]);
    expect(reports.results).toEqual([result]);
    // the bridge writes nothing: the record is as it was
    const rec = store.calls.getById(record.id)!;
    expect(rec.messages).toEqual([]);
    expect(rec.summary).toBeUndefined();
  });

  it('stop sends stop and waits (bounded) for the late result; idempotent', async () => {
    const { session, record, bridge, hangups, reports } = await started();
    session.ws.on('message', (d: Buffer) => {
      if (JSON.parse(d.toString()).event !== 'stop') return;
      setTimeout(() => {
        session.send({ event: 'result', result: { summary: 'late' } });
        session.ws.close(1000);
      }, 100);
    });
    const t0 = Date.now();
    await Promise.all([bridge.stop(), bridge.stop()]);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(reports.results.map((r) => r.summary)).toEqual(['late']);
    expect(store.calls.getById(record.id)?.summary).toBeUndefined();
    expect(hangups).toEqual([]);

    const b = await started();
    const t1 = Date.now();
    await b.bridge.stop(); // this agent never closes: grace (300 ms), then our close
    expect(Date.now() - t1).toBeLessThan(1500);
    expect((await b.session.closed).code).toBe(1000);
  });

  it('PCM 16 kHz: callee frames resampled to 640-byte frames; agent PCM queued at 16 kHz', async () => {
    const { media, session } = await started('pcm_16000');
    expect((await session.started()).start).toMatchObject({
      mediaFormat: { encoding: 'audio/x-pcm-s16le', sampleRate: 16000 },
    });
    for (let i = 0; i < 5; i++) media.frame(Buffer.alloc(160, 0xff), i * 20);
    await waitUntil(() => session.binaryFrames.length === 5);
    const total = session.binaryFrames.reduce((n, f) => n + f.length, 0);
    expect(Math.abs(total - 5 * 640)).toBeLessThanOrEqual(8);
    const pcm = new Int16Array(320).map((_, i) => Math.round(8000 * Math.sin(i / 5)));
    const bytes = Buffer.from(pcm.buffer);
    session.ws.send(bytes.subarray(0, 102), { binary: true });
    session.ws.send(bytes.subarray(102), { binary: true });
    await waitUntil(() => media.enqueued.length === 2);
    expect(media.enqueued.every((e) => e.sampleRate === 16000)).toBe(true);
    const joined = new Int16Array([
      ...(media.enqueued[0]!.audio as Int16Array),
      ...(media.enqueued[1]!.audio as Int16Array),
    ]);
    expect(joined).toEqual(pcm);
  });

  it('voicemail detection: a long greeting → machine, told to the agent; the agent may say it left a message', async () => {
    const { media, session, reports } = await started('mulaw_8000', {
      agent: { voicemailDetection: true },
    });
    // 3 s of loud noise (not tonal: no beep), one continuous utterance.
    let seed = 7;
    for (let f = 0; f < 150; f++) {
      const ulaw = Buffer.alloc(160);
      for (let i = 0; i < 160; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        ulaw[i] = seed & 0x7f; // small magnitude codes: loud
      }
      media.frame(ulaw, f * 20);
    }
    const vm = await session.waitForEvent('voicemail');
    expect(vm.voicemail).toMatchObject({
      type: 'decision',
      result: 'machine',
      reason: 'long_greeting',
    });
    expect(reports.verdicts).toEqual(['caller_voice_mail']);
    session.send({ event: 'voicemail', voicemail: { messageLeft: true } });
    await waitUntil(() => reports.verdicts.length === 2);
    expect(reports.verdicts).toEqual(['caller_voice_mail', 'message_left']);
  });
});
