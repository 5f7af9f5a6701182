/**
 * The media worker thread: owns the RTP sockets, the pacing clock and every
 * call's MediaSession, so that packets leave on time whatever the main
 * thread is doing (garbage collection, SQLite, the agents' WebSockets).
 * Protocol: media-worker-protocol.ts.
 */
import { getPriority } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { MediaEngine } from '../media-engine.js';
import type { MediaSession } from '../media-session.js';
import type { ReceivedAudioFrame } from '../media-types.js';
import { sdesOfferKeysFromValues } from '../sdes-offer-keys.js';
import {
  type AudioMessage,
  packFrame,
  recordSize,
  type FromWorker,
  type MediaWorkerData,
  type SessionEventName,
  type SessionOp,
  type ToWorker,
} from './media-worker-protocol.js';
import { currentThreadId } from '../../thread-cpu.js';
import { setThreadPriority } from './thread-priority.js';

const BATCH_BYTES = 64 * 1024;
/** Frames per batch at most: the first of a burst does not wait for the whole burst. */
const FLUSH_FRAMES = 8;
const METRICS_INTERVAL_MS = 1000;
const LOOP_DELAY_RESOLUTION_MS = 10;

const port = parentPort!;
const data = workerData as MediaWorkerData;
const engine = new MediaEngine(data.config);
const sessions = new Map<number, MediaSession>();
let nextId = 1;

function post(m: FromWorker, transfer?: ArrayBuffer[]): void {
  port.postMessage(m, transfer);
}

if (data.nice !== undefined || data.realtimePriority) {
  // no nice asked: the thread's own (a no-op), so a real-time priority still applies
  const nice = data.nice ?? getPriority();
  post({ t: 'priority', priority: setThreadPriority(nice, data.realtimePriority) });
}

/**
 * Received audio of all sessions, sent once per event-loop turn (or every
 * FLUSH_FRAMES frames, whichever comes first): packed into
 * one reused staging buffer, and only the used part is copied out and
 * transferred (no large allocation per turn).
 */
class AudioBatch {
  private readonly staging = new ArrayBuffer(BATCH_BYTES);
  private readonly view = new DataView(this.staging);
  private readonly bytes = new Uint8Array(this.staging);
  private offset = 0;
  private count = 0;

  add(id: number, session: MediaSession, frame: ReceivedAudioFrame): void {
    const size = recordSize(frame.ulaw.length);
    if (size > BATCH_BYTES) return; // not a 20 ms frame: no RTP payload is that large
    if (this.offset + size > BATCH_BYTES) this.flush();
    if (this.count === 0) setImmediate(this.flush);
    this.offset = packFrame(this.view, this.bytes, this.offset, {
      id,
      queuedBytes: session.queuedMs * 8,
      mediaTimeMs: frame.mediaTimeMs,
      receivedAt: frame.receivedAt,
      ulaw: frame.ulaw,
    });
    if (++this.count >= FLUSH_FRAMES) this.flush();
  }

  readonly flush = (): void => {
    if (this.count === 0) return;
    const batch = this.staging.slice(0, this.offset);
    data.audioPort.postMessage({ batch, count: this.count } satisfies AudioMessage, [batch]);
    this.offset = 0;
    this.count = 0;
  };
}

const audio = new AudioBatch();

async function create(m: Extract<ToWorker, { t: 'create' }>): Promise<void> {
  try {
    const session = await engine.createSession(
      {
        record: m.record,
        ...(m.inactivityTimeoutSec !== undefined
          ? { inactivityTimeoutSec: m.inactivityTimeoutSec }
          : {}),
        ...(m.srtp !== undefined ? { srtp: m.srtp } : {}),
      },
      m.sdesKeys ? sdesOfferKeysFromValues(m.sdesKeys) : undefined,
    );
    const id = nextId++;
    sessions.set(id, session);
    session.onAudio((frame) => audio.add(id, session, frame));
    const forward = (name: SessionEventName) => (data: unknown) =>
      post({ t: 'event', id, name, data });
    for (const name of ['dtmf', 'mark', 'stats', 'inactive', 'latched'] as const) {
      session.on(name, forward(name));
    }
    post({ t: 'created', req: m.req, id, port: session.localPort, address: session.localAddress });
  } catch (err) {
    post({ t: 'createFailed', req: m.req, message: (err as Error).message });
  }
}

/** Applies one operation; the main thread validated it already, so failures are dropped. */
function apply(op: SessionOp, audio: ArrayBuffer | null): void {
  const session = sessions.get(op[1]);
  if (!session) return; // closed meanwhile
  try {
    switch (op[0]) {
      case 'enqueue':
        // the playout queue keeps the view: the batch lives while any of it is queued
        if (audio) session.enqueue(new Uint8Array(audio, op[2], op[3]));
        break;
      case 'mark':
        session.mark(op[2]);
        break;
      case 'clear':
        session.clear();
        break;
      case 'dtmf':
        session.sendDtmf(op[2]);
        break;
      case 'answer':
        session.applyAnswer(op[2]);
        break;
      case 'offer':
        session.answerOffer(op[2]);
        break;
    }
  } catch {
    // the main thread's own negotiation already reported this
  }
}

async function close(id: number, reason: string): Promise<void> {
  const session = sessions.get(id);
  if (!session) return;
  sessions.delete(id);
  audio.flush(); // the last frames before the close result
  const result = await session.close(reason);
  post({ t: 'closed', id, result });
}

/** This thread's event-loop delay, reset at each report (the pacing clock's timers share the loop). */
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
loopDelay.enable();
const tid = currentThreadId();

function postMetrics(): void {
  const loop = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 };
  loopDelay.reset();
  post({
    t: 'metrics',
    metrics: {
      tid,
      loopDelay: loop,
      active: engine.activeSessions,
      pacing: engine.pacingStats(),
      spacing: engine.sendSpacingHistogram(),
      audioWait: engine.agentAudioWaitHistogram(),
    },
  });
}
const metricsTimer = setInterval(postMetrics, METRICS_INTERVAL_MS);

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'create':
      void create(m);
      break;
    case 'ops':
      for (const op of m.ops) apply(op, m.audio);
      break;
    case 'close':
      void close(m.id, m.reason);
      break;
    case 'closeAll':
      clearInterval(metricsTimer);
      void Promise.all([...sessions.keys()].map((id) => close(id, 'shutdown'))).then(() => {
        postMetrics();
        post({ t: 'closedAll' });
      });
      break;
  }
});
