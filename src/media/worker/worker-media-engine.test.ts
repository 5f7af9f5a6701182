import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MediaConfig } from '../media-config.js';
import { MediaEngine } from '../media-engine.js';
import { MediaError } from '../media-error.js';
import type { ReceivedAudioFrame } from '../media-types.js';
import { testPortRange } from '../test-support/port-range.js';
import { runUrgentWork } from '../../urgent-work.js';
import { realtimePriorityOf, type ThreadPriority } from './thread-priority.js';
import {
  WORKER_YOUNG_GENERATION_MB,
  WorkerMediaEngine,
  type ReceivedFrame,
} from './worker-media-engine.js';
import { sleep, until as waitUntil } from '../test-support/wait.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const base = (): Partial<MediaConfig> => ({
  bindAddress: '127.0.0.1',
  advertisedAddress: '127.0.0.1',
  ...testPortRange(),
  inactivityTimeoutSec: 0,
});

function workerEngine(config: Partial<MediaConfig> = {}): WorkerMediaEngine {
  const e = new WorkerMediaEngine({ ...base(), ...config });
  closers.push(() => e.close());
  return e;
}

function localEngine(config: Partial<MediaConfig> = {}): MediaEngine {
  const e = new MediaEngine({ ...base(), ...config });
  closers.push(() => e.close());
  return e;
}

/** Waits up to 4 s: a worker thread has to start first. */
const until = (cond: () => boolean): Promise<void> => waitUntil(cond, 4000);

describe('WorkerMediaEngine: sessions on a worker thread', () => {
  it('offer/answer with an in-thread peer, audio both ways byte for byte, marks, DTMF, stats on close', async () => {
    const engine = workerEngine();
    const w = await engine.createSession();
    const peer = await localEngine().createSession();
    const n = w.applyAnswer(peer.answerOffer(w.createOffer()));
    expect(n.codec).toBe('PCMU');

    // worker → peer: what the agent queues goes out paced, in order
    const atPeer: Buffer[] = [];
    peer.onAudio((f: ReceivedAudioFrame) => {
      if (f.payload[0] !== 0xff) atPeer.push(Buffer.from(f.payload));
    });
    const speech = Buffer.alloc(800);
    for (let i = 0; i < speech.length; i++) speech[i] = i % 200;
    const marks: string[] = [];
    w.on('mark', (m) => marks.push(m));
    expect(w.enqueue(speech)).toBe(100);
    w.mark('spoken');
    await until(() => marks.length === 1);
    await sleep(60);
    expect(Buffer.concat(atPeer)).toEqual(speech);
    // the worker reports the speech's wait for its first frame (metrics every second)
    const waits = () => engine.agentAudioWaitHistogram().reduce((x, y) => x + y, 0);
    await until(() => waits() > 0);
    expect(waits()).toBe(1);

    // peer → worker → main thread: frames keep their bytes, times on this thread's clock
    const atMain: ReceivedFrame[] = [];
    w.onAudio((f) => {
      if (f.ulaw[0] !== 0xff) atMain.push({ ...f, ulaw: Buffer.from(f.ulaw) });
    });
    const back = Buffer.alloc(480, 0x33);
    peer.enqueue(back);
    await until(() => atMain.length === 3);
    expect(Buffer.concat(atMain.map((f) => f.ulaw))).toEqual(back);
    for (const f of atMain) {
      const age = performance.now() - f.receivedAt;
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(2000);
    }

    // digits: RFC 4733 out of the worker, reported once at the peer
    const digits: string[] = [];
    peer.on('dtmf', (d) => digits.push(d.digit));
    w.sendDtmf('7#');
    await until(() => digits.length === 2);
    expect(digits).toEqual(['7', '#']);
    expect(() => w.sendDtmf('x')).toThrow(MediaError);

    const result = await w.close();
    expect(result.networkQuality.packetsReceived).toBeGreaterThan(10);
    expect(result.networkQuality.packetsLost).toBe(0);
    expect(result.counters.packetsSent).toBeGreaterThan(10);
    await until(() => w.stats().packetsReceived === result.networkQuality.packetsReceived);
  });

  it('clear drops queued audio at once and reports the marks it dropped, never played later', async () => {
    const w = await workerEngine().createSession();
    const peer = await localEngine().createSession();
    w.applyAnswer(peer.answerOffer(w.createOffer()));
    const marks: string[] = [];
    w.on('mark', (m) => marks.push(m));
    expect(w.enqueue(Buffer.alloc(8000, 0x11))).toBe(1000); // a second of speech
    w.mark('after-speech');
    await sleep(100);
    const cleared = w.clear();
    expect(cleared.droppedMarks).toEqual(['after-speech']);
    expect(cleared.droppedMs).toBeGreaterThan(700);
    await sleep(300);
    expect(marks).toEqual([]);
    let loud = 0;
    peer.onAudio((f) => {
      if (f.payload[0] === 0x11) loud++;
    });
    await sleep(200);
    expect(loud).toBe(0); // nothing of the dropped second arrives any more
  });

  it('throws the SDP errors synchronously, keeps the send spacing figures, and records in the worker', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wrk-rec-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const engine = workerEngine({ recordingDirectory: dir });
    const w = await engine.createSession({ record: true });
    expect(() => w.applyAnswer('v=0\r\nnot sdp')).toThrow(MediaError);
    const peer = await localEngine().createSession();
    w.applyAnswer(peer.answerOffer(w.createOffer()));
    peer.enqueue(Buffer.alloc(1600, 0x22));
    await sleep(1300); // the worker reports its metrics every second
    expect(engine.activeSessions).toBe(1);
    expect(engine.pacingStats().ticks).toBeGreaterThan(20);
    expect(engine.sendSpacingHistogram().reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    const { recording } = await w.close();
    expect(engine.activeSessions).toBe(0);
    const wav = await readFile(recording!.path);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.length).toBeGreaterThan(44 + 50 * 160 * 4);
  });

  it.runIf(process.platform === 'linux')(
    "sets the worker thread's nice value, and that thread's only",
    async () => {
      let reported: ThreadPriority | null = null;
      const mainNice = getPriority(process.pid);
      // lowering a priority needs no privilege: the test holds as any user
      const nice = Math.min(19, mainNice + 5);
      const engine = new WorkerMediaEngine(base(), { nice, onPriority: (p) => (reported = p) });
      closers.push(() => engine.close());
      await until(() => reported !== null);
      const p = reported! as ThreadPriority;
      expect(p.error).toBeUndefined();
      expect(p.tid).not.toBe(process.pid);
      expect(p.nice).toBe(nice);
      expect(getPriority(p.tid!)).toBe(nice); // the kernel's view of the worker thread
      expect(getPriority(process.pid)).toBe(mainNice); // the main thread is untouched
    },
  );

  it.runIf(process.platform === 'linux')(
    'puts the worker thread, and that thread only, under SCHED_RR when asked and permitted',
    async () => {
      let reported: ThreadPriority | null = null;
      const engine = new WorkerMediaEngine(base(), {
        realtimePriority: 3, // no nice asked: the real-time priority applies alone
        onPriority: (p) => (reported = p),
      });
      closers.push(() => engine.close());
      await until(() => reported !== null);
      const p = reported! as ThreadPriority;
      const permitted = process.getuid?.() === 0; // or CAP_SYS_NICE / RLIMIT_RTPRIO; CI is root
      expect(p.realtimeRequested).toBe(3);
      expect(p.realtimeError === undefined).toBe(permitted);
      expect(p.realtime).toBe(permitted ? 3 : 0);
      expect(realtimePriorityOf(p.tid!)).toBe(permitted ? 3 : 0); // the kernel's view
      expect(realtimePriorityOf(process.pid)).toBe(0); // the main thread is untouched
    },
  );

  it("bounds the worker's young generation (short scavenges between frames)", async () => {
    const engine = workerEngine();
    await engine.createSession(); // the worker is up
    expect(engine.resourceLimits.maxYoungGenerationSizeMb).toBe(WORKER_YOUNG_GENERATION_MB);
    expect(WORKER_YOUNG_GENERATION_MB).toBeLessThanOrEqual(4);
  });

  it.runIf(process.platform === 'linux')(
    "reports its thread's kernel id (not the main thread's) and its event-loop delay, taken once",
    async () => {
      const engine = workerEngine();
      await engine.createSession();
      // the first report comes a second after start
      await until(() => engine.threadId !== null);
      expect(engine.threadId).not.toBe(process.pid);
      const first = engine.takeLoopDelay();
      // sampled with a 10 ms timer: an idle loop reads about 10 ms, never 0
      expect(first.p99Ms).toBeGreaterThan(1);
      expect(first.maxMs).toBeGreaterThanOrEqual(first.p99Ms);
      expect(engine.takeLoopDelay()).toEqual({ p99Ms: 0, maxMs: 0 });
    },
  );

  it('hands pending received audio over at a yield point while the main thread is busy', async () => {
    const w = await workerEngine().createSession();
    const peer = await workerEngine().createSession(); // sends from its own thread
    w.applyAnswer(peer.answerOffer(w.createOffer()));
    let frames = 0;
    w.onAudio(() => frames++);
    peer.enqueue(Buffer.alloc(8000, 0x33));
    await until(() => frames > 0);
    const end = performance.now() + 200; // a long task: no event-loop turn for 200 ms
    while (performance.now() < end);
    const before = frames;
    runUrgentWork(); // what call set-up code does between its steps
    expect(frames - before).toBeGreaterThanOrEqual(5); // ~10 frames came in meanwhile
  });
});
