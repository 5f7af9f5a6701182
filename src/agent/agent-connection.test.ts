// AgentConnection against a raw `ws` server on loopback (test/agents/agent-server.ts).
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { AgentServer, waitUntil, type AgentSession } from '../../test/agents/agent-server.js';
import { AgentConnection, type AgentConnectOptions } from './agent-connection.js';
import { DestinationGuard } from '../net/destination-guard.js';
import { AgentError } from './agent-error.js';
import type { AgentAudio, AgentCloseInfo } from './agent-messages.js';
import { EXTENSION_EVENTS } from './agent-messages.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  extra: Partial<AgentConnectOptions> = {},
): Promise<{ conn: AgentConnection; agent: AgentSession; server: AgentServer }> {
  const server = await AgentServer.listen();
  cleanups.push(() => server.close());
  const conn = await AgentConnection.connect({
    url: server.url,
    callSid: 'call-1',
    accountSid: 'company-1',
    streamSid: 'MZtest',
    customParameters: { name: 'Ana' },
    call: { agentId: 'agent-1', agentVersion: 2, direction: 'outbound' },
    connectTimeoutMs: 2000,
    ...extra,
  });
  cleanups.push(() => conn.close().then(() => undefined));
  return { conn, agent: await server.session(), server };
}

function next<T>(conn: AgentConnection, event: 'audio' | 'mark' | 'close'): Promise<T> {
  return new Promise((resolve) => conn.once(event, (v: unknown) => resolve(v as T)));
}

describe('AgentConnection, mulaw_8000 (Twilio JSON)', () => {
  it('sends connected then start with every Twilio field, numbers as strings', async () => {
    const { conn, agent } = await setup({ headers: { authorization: 'Bearer t' } });
    conn.start();
    await agent.started();
    expect(agent.headers.authorization).toBe('Bearer t');
    expect(agent.messages[0]).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    expect(agent.messages[1]).toEqual({
      event: 'start',
      sequenceNumber: '1',
      start: {
        accountSid: 'company-1',
        streamSid: 'MZtest',
        callSid: 'call-1',
        tracks: ['inbound'],
        customParameters: { name: 'Ana' },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        call: { agentId: 'agent-1', agentVersion: 2, direction: 'outbound' },
      },
      streamSid: 'MZtest',
    });
  });

  it('sends media with string fields, steady timestamps and a base64 round trip', async () => {
    const { conn, agent } = await setup();
    conn.start();
    const frames = [0, 1, 2].map((i) => Buffer.alloc(160, 0x10 + i));
    expect(conn.sendAudio(frames[0]!)).toBe(true);
    expect(conn.sendAudio(frames[1]!)).toBe(true);
    expect(conn.sendAudio(frames[2]!, 1000)).toBe(true);
    await agent.waitFor((m) => m.event === 'media' && (m.media as { chunk: string }).chunk === '3');
    const media = agent.messages.filter((m) => m.event === 'media');
    expect(media.map((m) => m.sequenceNumber)).toEqual(['2', '3', '4']);
    expect(media.map((m) => (m.media as { timestamp: string }).timestamp)).toEqual([
      '0',
      '20',
      '1000',
    ]);
    for (const m of media) {
      expect(m.streamSid).toBe('MZtest');
      const body = m.media as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['track', 'chunk', 'timestamp', 'payload']);
      expect(body.track).toBe('inbound');
      for (const v of Object.values(body)) expect(typeof v).toBe('string');
    }
    expect(agent.inboundAudio()).toEqual(Buffer.concat(frames));
    expect(conn.counters).toMatchObject({ mediaFramesSent: 3, audioBytesSent: 480 });
    expect(conn.sentAudioMs).toBe(60);
  });

  it('sendEvent: our extension event in the Twilio style', async () => {
    const { conn, agent } = await setup();
    expect(conn.sendEvent('voicemail', { result: 'machine' })).toBe(false); // not started
    conn.start();
    expect(conn.sendEvent('voicemail', { result: 'machine' })).toBe(true);
    expect(await agent.waitForEvent('voicemail')).toEqual({
      event: 'voicemail',
      streamSid: 'MZtest',
      sequenceNumber: '2',
      voicemail: { result: 'machine' },
    });
  });

  it('stop with a grace period: the agent answers stop with a result, then closes itself', async () => {
    const { conn, agent } = await setup();
    const results: unknown[] = [];
    conn.on('result', (r) => results.push(r));
    conn.start();
    void agent.waitForEvent('stop').then(() => {
      agent.send({ event: 'result', result: { summary: 'late' } });
      agent.ws.close(1000, 'bye');
    });
    const info = await conn.stop(2000);
    expect(results).toEqual([{ summary: 'late' }]);
    expect(info).toMatchObject({ code: 1000, byUs: false });
  });

  it('sends dtmf, mark and stop, then closes by us', async () => {
    const { conn, agent } = await setup();
    conn.start();
    expect(conn.sendDtmf('7')).toBe(true);
    expect(conn.sendDtmf('77')).toBe(false);
    expect(conn.sendMark('m1')).toBe(true);
    const closeEvent = next<AgentCloseInfo>(conn, 'close');
    const info = await conn.stop();
    expect(info).toEqual({ code: 1000, reason: 'stop', byUs: true });
    expect(await closeEvent).toEqual(info);
    expect(agent.messages.slice(2)).toEqual([
      {
        event: 'dtmf',
        streamSid: 'MZtest',
        sequenceNumber: '2',
        dtmf: { track: 'inbound_track', digit: '7' },
      },
      { event: 'mark', streamSid: 'MZtest', sequenceNumber: '3', mark: { name: 'm1' } },
      {
        event: 'stop',
        sequenceNumber: '4',
        streamSid: 'MZtest',
        stop: { accountSid: 'company-1', callSid: 'call-1' },
      },
    ]);
    expect(conn.sendAudio(Buffer.alloc(160))).toBe(false);
    expect(conn.counters.framesDroppedNotOpen).toBe(1);
  });

  it('emits agent media as a Buffer stamped with the clock, marks and clear in order', async () => {
    let now = 5000;
    const { conn, agent } = await setup({ clock: { now: () => now } });
    const seen: string[] = [];
    const audio: AgentAudio[] = [];
    conn.on('audio', (a) => {
      audio.push(a);
      seen.push(`audio:${a.payload.length}`);
    });
    conn.on('mark', (name) => seen.push(`mark:${name}`));
    conn.on('clear', () => seen.push('clear'));
    conn.start();
    const bytes = Buffer.from(Array.from({ length: 320 }, (_, i) => i & 0xff));
    agent.send({
      event: 'media',
      streamSid: 'MZtest',
      media: { payload: bytes.toString('base64') },
    });
    agent.send({ event: 'mark', streamSid: 'MZtest', mark: { name: 'a' } });
    agent.send({ event: 'clear', streamSid: 'MZtest' });
    now = 6000;
    await waitUntil(() => seen.length === 3);
    expect(seen).toEqual(['audio:320', 'mark:a', 'clear']);
    expect(audio[0]!.payload).toEqual(bytes);
    expect(audio[0]!.format).toBe('mulaw_8000');
    expect([5000, 6000]).toContain(audio[0]!.receivedAtMs);
  });

  it('emits our extension events', async () => {
    const { conn, agent } = await setup();
    const got: [string, unknown][] = [];
    for (const e of EXTENSION_EVENTS) {
      conn.on(e, (v: unknown) => got.push([e, v]));
    }
    conn.start();
    agent.send({ event: 'transcript', transcript: { role: 'agent', content: 'Hello' } });
    agent.send({ event: 'sendDtmf', sendDtmf: { digits: '1#' } });
    agent.send({ event: 'transfer', transfer: { to: '+15550100' } });
    agent.send({ event: 'result', result: { summary: 'ok', costs: { llm: 0.5 } } });
    agent.send({ event: 'voicemail', voicemail: { messageLeft: true } });
    agent.send({ event: 'hangup', hangup: { reason: 'done' } });
    await waitUntil(() => got.length === 6);
    expect(got).toEqual([
      ['transcript', { role: 'agent', content: 'Hello' }],
      ['sendDtmf', { digits: '1#' }],
      ['transfer', { destination: '+15550100' }],
      ['result', { summary: 'ok', costs: { llm: 0.5 } }],
      ['voicemail', { messageLeft: true }],
      ['hangup', { reason: 'done' }],
    ]);
    expect(conn.counters.extensionEventsReceived).toBe(6);
  });

  it('counts and ignores malformed frames, bad shapes, unknown events and binary frames', async () => {
    const { conn, agent } = await setup();
    const marks: string[] = [];
    conn.on('mark', (n) => marks.push(n));
    conn.start();
    agent.ws.send('{not json');
    agent.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    agent.send({ event: 'media', media: { payload: 12 } });
    agent.send({ event: 'hangup', hangup: { reason: 12 } });
    agent.send({ event: 'frobnicate', frobnicate: {} });
    agent.send({ event: 'mark', mark: { name: 'still-alive' } });
    await waitUntil(() => marks.length === 1);
    expect(conn.counters).toMatchObject({
      malformedFrames: 2,
      invalidMessages: 2,
      unknownEvents: 1,
      marksReceived: 1,
    });
    expect(conn.state).toBe('started');
  });

  it('holds what the agent sends before start() and delivers it after', async () => {
    const { conn, agent } = await setup();
    agent.send({ event: 'mark', mark: { name: 'early' } });
    await new Promise((r) => setTimeout(r, 50));
    const marks: string[] = [];
    conn.on('mark', (n) => marks.push(n));
    conn.start();
    expect(marks).toEqual(['early']);
  });

  it('emits close with byUs false when the agent closes mid-call', async () => {
    const { conn, agent } = await setup();
    conn.start();
    const closed = next<AgentCloseInfo>(conn, 'close');
    agent.ws.close(4000, 'agent done');
    expect(await closed).toEqual({ code: 4000, reason: 'agent done', byUs: false });
    expect(conn.state).toBe('closed');
    expect(conn.sendMark('late')).toBe(false);
  });

  it('records RTP→WS latency from arrivedAtMs on the injected clock', async () => {
    const { conn } = await setup({ clock: { now: () => 1003 } });
    conn.start();
    conn.sendAudio(Buffer.alloc(160, 0xff), undefined, 1000);
    conn.sendAudio(Buffer.alloc(160, 0xff), undefined, 1001);
    conn.sendAudio(Buffer.alloc(160, 0xff));
    expect(conn.latency.snapshot()).toMatchObject({ count: 2, sumMs: 5, maxMs: 3 });
  });

  it('drops audio and counts it while the send buffer is over the limit', async () => {
    const { conn } = await setup({ maxBufferedBytes: -1 });
    conn.start();
    expect(conn.sendAudio(Buffer.alloc(160))).toBe(false);
    expect(conn.counters.framesDroppedBackpressure).toBe(1);
  });

  it('survives a listener that throws: counted, reported as error', async () => {
    const { conn, agent } = await setup();
    const errors: Error[] = [];
    conn.on('error', (e) => errors.push(e));
    conn.on('clear', () => {
      throw new Error('listener bug');
    });
    const marks: string[] = [];
    conn.on('mark', (n) => marks.push(n));
    conn.start();
    agent.send({ event: 'clear' });
    agent.send({ event: 'mark', mark: { name: 'after' } });
    await waitUntil(() => marks.length === 1);
    expect(errors.map((e) => e.message)).toEqual(['listener bug']);
    expect(conn.counters.listenerErrors).toBe(1);
  });
});

describe('AgentConnection, PCM (binary frames)', () => {
  it('sends one start text frame, then binary PCM both ways', async () => {
    const { conn, agent } = await setup({ audioFormat: 'pcm_16000' });
    const audio: AgentAudio[] = [];
    conn.on('audio', (a) => audio.push(a));
    conn.start();
    const start = await agent.started();
    expect(agent.messages[0]).toBe(start);
    expect(start.start.mediaFormat).toEqual({
      encoding: 'audio/x-pcm-s16le',
      sampleRate: 16000,
      channels: 1,
    });
    const pcm = Int16Array.from({ length: 320 }, (_, i) => (i - 160) * 100);
    expect(conn.sendAudio(pcm)).toBe(true);
    expect(conn.sendAudio(Buffer.alloc(640, 1))).toBe(true);
    await waitUntil(() => agent.binaryFrames.length === 2);
    expect(new Int16Array(new Uint8Array(agent.binaryFrames[0]!).buffer)).toEqual(pcm);
    expect(conn.sentAudioMs).toBe(40);
    conn.sendMark('m');
    await agent.waitForEvent('mark');

    agent.ws.send(Buffer.from(pcm.buffer), { binary: true });
    agent.ws.send(Buffer.alloc(3), { binary: true });
    agent.send({ event: 'media', media: { payload: 'AAAA' } });
    agent.send({ event: 'clear' });
    await waitUntil(() => conn.counters.clearsReceived === 1);
    expect(audio).toHaveLength(1);
    expect(audio[0]!.format).toBe('pcm_16000');
    expect(new Int16Array(new Uint8Array(audio[0]!.payload).buffer)).toEqual(pcm);
    expect(conn.counters).toMatchObject({ malformedFrames: 1, invalidMessages: 1 });
  });
});

describe('AgentConnection.connect failures → agent_unreachable', () => {
  async function expectUnreachable(
    url: string,
    timeoutMs = 1000,
    extra: Partial<AgentConnectOptions> = {},
  ): Promise<AgentError> {
    const err = await AgentConnection.connect({
      url,
      callSid: 'c',
      accountSid: 'a',
      connectTimeoutMs: timeoutMs,
      ...extra,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('agent_unreachable');
    return err as AgentError;
  }

  it('when the URL leads where agent.allowedNetworks does not allow: an IP literal, or a name at its lookup', async () => {
    const server = await AgentServer.listen();
    const port = Number(new URL(server.url).port);
    const strict = { destinations: new DestinationGuard([]) };
    const literal = await expectUnreachable(`ws://127.0.0.1:${port}/agent`, 1000, strict);
    expect(literal.message).toContain('refused address');
    const named = await expectUnreachable(`ws://localhost:${port}/agent`, 1000, strict);
    expect(JSON.stringify(named.details)).toContain('destination refused');
    const meta = await expectUnreachable('ws://169.254.169.254/agent', 1000, {
      destinations: new DestinationGuard(['127.0.0.0/8']),
    });
    expect(JSON.stringify(meta.details)).toContain('linkLocal');
    expect(server.sessions).toHaveLength(0);
    const allowed = await AgentConnection.connect({
      url: `ws://localhost:${port}/agent`,
      callSid: 'c',
      accountSid: 'a',
      destinations: new DestinationGuard(['127.0.0.0/8', '::1/128']),
    });
    await allowed.stop(0);
    await server.close();
  });

  it('when the port refuses', async () => {
    const port = await freePort();
    await expectUnreachable(`ws://127.0.0.1:${port}/`);
  });

  it('when nothing answers the upgrade in time', async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => silent.close(() => r())));
    silent.on('connection', (s) => cleanups.push(() => void s.destroy()));
    const started = Date.now();
    const err = await expectUnreachable(
      `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
      200,
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.details).toMatchObject({ timeoutMs: 200 });
  });

  it('when the server answers the upgrade with an HTTP error', async () => {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (_info, cb) => cb(false, 403, 'Forbidden'),
    });
    await new Promise<void>((r) => wss.once('listening', r));
    cleanups.push(() => new Promise<void>((r) => wss.close(() => r())));
    const err = await expectUnreachable(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`);
    expect(err.details).toMatchObject({ httpStatus: 403 });
  });

  it('when the URL is not a ws URL', async () => {
    await expectUnreachable('http://');
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
