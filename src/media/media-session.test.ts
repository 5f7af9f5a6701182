import { createSocket } from 'node:dgram';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALAW_DECODE, encodeUlawSample, ULAW_TO_ALAW } from './g711.js';
import type { MediaConfig } from './media-config.js';
import { SPACING_BIN_MS } from './pacing-clock.js';
import type { MediaSession } from './media-session.js';
import type { ReceivedAudioFrame } from './media-types.js';
import { createRtpHeader, parseRtpPacket } from './rtp-packet.js';
import { testPortRange } from './test-support/port-range.js';
import { useTestEngines } from './test-support/test-engines.js';
import { sleep, until } from './test-support/wait.js';

const { engine, engines } = useTestEngines();

/** A offers, B answers: a connected pair. */
async function pair(
  a: Partial<MediaConfig> = {},
  b: Partial<MediaConfig> = {},
): Promise<[MediaSession, MediaSession]> {
  const sa = await engine(a).createSession();
  const sb = await engine(b).createSession();
  sa.applyAnswer(sb.answerOffer(sa.createOffer()));
  return [sa, sb];
}

describe('MediaSession on loopback', () => {
  it('carries queued μ-law both ways byte for byte, with talk-spurt marker and marks', async () => {
    const [a, b] = await pair();
    const got: ReceivedAudioFrame[] = [];
    let viewIsPayload = true;
    b.onAudio((f) => {
      viewIsPayload &&= f.ulaw === f.payload; // PCMU: no transcoding
      got.push({ ...f, payload: Buffer.from(f.payload) });
    });
    const speech = Buffer.alloc(800);
    for (let i = 0; i < speech.length; i++) speech[i] = i % 200; // never 0xff (silence)
    const marks: string[] = [];
    a.on('mark', (m) => marks.push(m));
    await sleep(100); // some silence first
    expect(a.enqueue(speech)).toBe(100);
    a.mark('end-of-speech');
    await until(() => marks.length > 0);
    await sleep(60);
    const audio = got.filter((f) => f.payload[0] !== 0xff);
    expect(Buffer.concat(audio.map((f) => f.payload))).toEqual(speech);
    expect(audio[0]!.marker).toBe(true);
    expect(audio.slice(1).some((f) => f.marker)).toBe(false);
    expect(marks).toEqual(['end-of-speech']);
    // sequence and timestamps continuous through silence (RFC 3550 §5.1)
    for (let i = 1; i < got.length; i++) {
      expect(got[i]!.sequenceNumber - got[i - 1]!.sequenceNumber).toBe(1);
      expect((got[i]!.timestamp - got[i - 1]!.timestamp) >>> 0).toBe(160);
    }
    expect(viewIsPayload).toBe(true);
  });

  it('measures how long agent audio that found the queue empty waited for its frame', async () => {
    const [a] = await pair();
    const measured = engines[0]!;
    await sleep(60);
    a.enqueue(Buffer.alloc(480, 0x10)); // 3 frames into an empty queue: one wait
    a.enqueue(Buffer.alloc(160, 0x10)); // behind the agent's own audio: not a wait of ours
    await until(() => a.queuedMs === 0);
    await sleep(30);
    a.enqueue(Buffer.alloc(160, 0x10)); // empty again: a second wait
    await until(() => a.queuedMs === 0);
    await sleep(30);
    const waits: number[] = [];
    measured.agentAudioWaitHistogram().forEach((n, bin) => {
      for (let i = 0; i < n; i++) waits.push(bin * SPACING_BIN_MS);
    });
    expect(waits).toHaveLength(2);
    // at most one frame and the timer's lateness; a generous bound for a shared machine
    for (const ms of waits) expect(ms).toBeLessThan(100);
  });

  it('negotiates PCMA and gives a μ-law view of it', async () => {
    const [a, b] = await pair({}, { codecs: ['PCMA'] });
    expect(a.media?.codec).toBe('PCMA');
    const frames: ReceivedAudioFrame[] = [];
    b.onAudio((f) =>
      frames.push({ ...f, payload: Buffer.from(f.payload), ulaw: Buffer.from(f.ulaw) }),
    );
    a.enqueue(new Int16Array(160).fill(1000));
    await until(() => frames.some((f) => f.payload[0] !== 0xd5));
    const f = frames.find((x) => x.payload[0] !== 0xd5)!;
    expect(f.codec).toBe('PCMA');
    // the queue holds μ-law (the agents' format); PCMA is transcoded from it on send
    expect(f.payload[0]).toBe(ULAW_TO_ALAW[encodeUlawSample(1000)]);
    expect(Math.abs(ALAW_DECODE[f.payload[0]!]! - 1000)).toBeLessThan(40);
    expect(f.ulaw[0]).toBe(encodeUlawSample(ALAW_DECODE[f.payload[0]!]!));
  });

  it('takes 16 and 24 kHz PCM through the resampler', async () => {
    const [a] = await pair();
    expect(a.enqueue(new Int16Array(320), 16000)).toBeCloseTo(20, 0);
    expect(a.enqueue(new Int16Array(480), 24000)).toBeCloseTo(20, 0);
    expect(() => a.enqueue(new Int16Array(441), 44100)).toThrow(/44100/);
  });

  it('clear drops queued audio at once and reports the dropped marks', async () => {
    const [a, b] = await pair();
    let audioFrames = 0;
    b.onAudio((f) => (audioFrames += f.payload[0] === 0xff ? 0 : 1));
    a.enqueue(Buffer.alloc(8000 * 5, 0x10));
    a.mark('m1');
    await sleep(100);
    const result = a.clear();
    expect(result.droppedMarks).toEqual(['m1']);
    expect(result.droppedMs).toBeGreaterThan(4700);
    const before = audioFrames;
    await sleep(100);
    expect(audioFrames - before).toBeLessThanOrEqual(1);
  });

  it('sends and receives DTMF once per digit (RFC 4733)', async () => {
    const [a, b] = await pair();
    const digits: string[] = [];
    b.on('dtmf', (d) => digits.push(d.digit));
    a.sendDtmf('12#');
    await until(() => digits.length === 3);
    await sleep(200);
    expect(digits).toEqual(['1', '2', '#']);
    expect(a.counters().dtmfPacketsSent).toBe(3 * 7);
    expect(() => a.sendDtmf('x')).toThrow(expect.objectContaining({ code: 'invalid_dtmf_digit' }));
  });

  it('reports stats in the spec shape, RTCP far-end reports and periodic stats events', async () => {
    const fast = { rtcpIntervalMs: 150, statsIntervalMs: 200 };
    const [a, b] = await pair(fast, fast);
    void b;
    const events: unknown[] = [];
    a.on('stats', (s) => events.push(s));
    await until(() => a.stats().farEnd !== undefined && events.length > 0);
    const s = a.stats();
    expect(Object.keys(s).sort()).toEqual(
      [
        'farEnd',
        'jitterMs',
        'lossPct',
        'packetsLost',
        'packetsOutOfOrder',
        'packetsReceived',
      ].sort(),
    );
    expect(Object.keys(s.farEnd!).sort()).toEqual(
      ['jitter', 'lossPct', 'packetsLost', 'reports', 'worstLossPct'].sort(),
    );
    expect(s.packetsReceived).toBeGreaterThan(0);
    expect(s.lossPct).toBe(0);
    const closed = await a.close();
    expect(closed.networkQuality.packetsReceived).toBeGreaterThan(0);
    expect(closed.counters.rtcpSent).toBeGreaterThan(0);
  });

  it("reports 'inactive' when the far end sends nothing, not while it holds with inactive", async () => {
    const a = await engine({ inactivityTimeoutSec: 0.2 }).createSession();
    const silent = createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', r));
    const port = silent.address().port;
    const sdp = (dir: string): string =>
      `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP 0\r\na=${dir}\r\n`;
    a.createOffer();
    a.applyAnswer(sdp('sendrecv'));
    let inactive = 0;
    a.on('inactive', () => inactive++);
    await until(() => inactive === 1);
    a.answerOffer(sdp('inactive'));
    expect(a.media?.direction).toBe('inactive');
    await sleep(400);
    expect(inactive).toBe(1);
    silent.close();
  });

  it('stops sending on hold (far end sendonly → we recvonly) and resumes', async () => {
    const [a, b] = await pair();
    let received = 0;
    b.onAudio(() => received++);
    await until(() => received > 3);
    const hold = b.createOffer().replace('a=sendrecv', 'a=sendonly');
    expect(a.answerOffer(hold)).toContain('a=recvonly');
    await sleep(60);
    const held = received;
    await sleep(150);
    expect(received - held).toBe(0);
    a.answerOffer(b.createOffer());
    await until(() => received > held + 3);
  });

  it('follows a re-offer to a new port and a new codec', async () => {
    const a = await engine().createSession();
    const first = createSocket('udp4');
    const second = createSocket('udp4');
    await new Promise<void>((r) => first.bind(0, '127.0.0.1', r));
    await new Promise<void>((r) => second.bind(0, '127.0.0.1', r));
    const offer = (port: number, pts: string): string =>
      `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${port} RTP/AVP ${pts}\r\n`;
    const h = createRtpHeader();
    const got: number[] = [];
    second.on('message', (m) => {
      parseRtpPacket(m, h);
      got.push(h.payloadType);
    });
    expect(a.answerOffer(offer(first.address().port, '0'))).toContain(' RTP/AVP 0');
    await sleep(60);
    const answer = a.answerOffer(offer(second.address().port, '8 0'));
    expect(answer).toContain(' RTP/AVP 8\r\n');
    expect(a.media).toMatchObject({ codec: 'PCMA', remotePort: second.address().port });
    await until(() => got.length > 3);
    expect(new Set(got)).toEqual(new Set([8]));
    expect(() => a.answerOffer(offer(first.address().port, '18'))).toThrow(
      expect.objectContaining({ code: 'no_selected_codec' }),
    );
    expect(a.media?.codec).toBe('PCMA'); // a refused re-offer leaves the media as it was
    first.close();
    second.close();
  });

  it('latches onto the address the far end really sends from (symmetric RTP)', async () => {
    const a = await engine().createSession();
    const far = createSocket('udp4');
    await new Promise<void>((r) => far.bind(0, '127.0.0.1', r));
    a.createOffer();
    // the SDP names a port nobody listens on; the far end sends from `far`
    a.applyAnswer(
      'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 9 RTP/AVP 0\r\n',
    );
    const seen: Buffer[] = [];
    far.on('message', (m) => seen.push(m));
    const pkt = Buffer.alloc(172, 0xff);
    pkt[0] = 0x80;
    far.send(pkt, a.localPort, '127.0.0.1');
    await until(() => seen.length > 2);
    const h = createRtpHeader();
    expect(parseRtpPacket(seen[0]!, h)).toBe(true);
    expect(h.ssrc).toBe(a.ssrc);
    far.close();
  });

  it('records both directions to a stereo WAV and returns its file id', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rec-'));
    try {
      const a = await engine({ recordingDirectory: dir }).createSession({ record: true });
      const b = await engine().createSession();
      a.applyAnswer(b.answerOffer(a.createOffer()));
      b.enqueue(new Int16Array(1600).fill(3000));
      a.enqueue(new Int16Array(1600).fill(-3000));
      await sleep(400);
      const { recording } = await a.close();
      expect(recording?.fileId).toMatch(/^[0-9a-f-]{36}$/);
      const wav = await readFile(recording!.path);
      expect(wav.readUInt16LE(22)).toBe(2);
      const samples = (wav.length - 44) / 4;
      let left = 0;
      let right = 0;
      for (let i = 0; i < samples; i++) {
        if (Math.abs(wav.readInt16LE(44 + i * 4) - 3000) < 200) left++;
        if (Math.abs(wav.readInt16LE(46 + i * 4) + 3000) < 200) right++;
      }
      expect(left).toBeGreaterThan(1400);
      expect(right).toBeGreaterThan(1400);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('releases its port pair on close for reuse', async () => {
    const { rtpPortMin } = testPortRange();
    const small = engine({ rtpPortMin, rtpPortMax: rtpPortMin + 1 });
    const s1 = await small.createSession();
    await expect(small.createSession()).rejects.toMatchObject({ code: 'no_rtp_port_available' });
    await s1.close();
    const s2 = await small.createSession();
    expect(s2.localPort).toBe(s1.localPort);
  });
});
