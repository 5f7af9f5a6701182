/**
 * The media worker thread: owns the RTP sockets, the pacing clock and every
 * call's MediaSession, so that packets leave on time whatever the main
 * thread is doing (garbage collection, SQLite, the agents' WebSockets).
 * Protocol: media-worker-protocol.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MediaEngine } from '../media-engine.js';
import type { MediaSession } from '../media-session.js';
import type { ReceivedAudioFrame } from '../media-types.js';
import {
  packFrame,
  recordSize,
  type FromWorker,
  type MediaWorkerData,
  type SessionEventName,
  type SessionOp,
  type ToWorker,
} from './media-worker-protocol.js';

const BATCH_BYTES = 64 * 1024;
const METRICS_INTERVAL_MS = 1000;

const port = parentPort!;
const engine = new MediaEngine((workerData as MediaWorkerData).config);
const sessions = new Map<number, MediaSession>();
let nextId = 1;

function post(m: FromWorker, transfer?: ArrayBuffer[]): void {
  port.postMessage(m, transfer);
}

/** Received audio of all sessions, sent once per event-loop turn. */
class AudioBatch {
  private buffer: ArrayBuffer | null = null;
  private view: DataView | null = null;
  private bytes: Uint8Array | null = null;
  private offset = 0;
  private count = 0;

  add(id: number, session: MediaSession, frame: ReceivedAudioFrame): void {
    const size = recordSize(frame.ulaw.length);
    if (this.buffer && this.offset + size > this.buffer.byteLength) this.flush();
    if (!this.buffer) {
      this.buffer = new ArrayBuffer(Math.max(BATCH_BYTES, size));
      this.view = new DataView(this.buffer);
      this.bytes = new Uint8Array(this.buffer);
      setImmediate(this.flush);
    }
    this.offset = packFrame(this.view!, this.bytes!, this.offset, {
      id,
      queuedBytes: session.queuedMs * 8,
      mediaTimeMs: frame.mediaTimeMs,
      receivedAt: frame.receivedAt,
      ulaw: frame.ulaw,
    });
    this.count++;
  }

  readonly flush = (): void => {
    const buffer = this.buffer;
    if (!buffer || this.count === 0) return;
    const batch = buffer.slice(0, this.offset);
    post({ t: 'audio', batch, count: this.count }, [batch]);
    this.buffer = null;
    this.view = null;
    this.bytes = null;
    this.offset = 0;
    this.count = 0;
  };
}

const audio = new AudioBatch();

async function create(m: Extract<ToWorker, { t: 'create' }>): Promise<void> {
  try {
    const session = await engine.createSession({
      record: m.record,
      ...(m.inactivityTimeoutSec !== undefined
        ? { inactivityTimeoutSec: m.inactivityTimeoutSec }
        : {}),
    });
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
function apply(op: SessionOp): void {
  const session = sessions.get(op[1]);
  if (!session) return; // closed meanwhile
  try {
    switch (op[0]) {
      case 'enqueue':
        session.enqueue(op[2]);
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

function postMetrics(): void {
  post({
    t: 'metrics',
    metrics: {
      active: engine.activeSessions,
      pacing: engine.pacingStats(),
      spacing: engine.sendSpacingHistogram(),
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
      for (const op of m.ops) apply(op);
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
