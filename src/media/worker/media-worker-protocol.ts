/**
 * Messages between the daemon's main thread and its media worker thread
 * (worker-media-engine.ts ↔ media-worker.ts). The per-frame traffic is
 * batched: received audio goes to the main thread as one packed buffer per
 * event-loop turn of the worker (transferred, not copied), and agent audio,
 * marks, clears and digits go to the worker as one ordered list per turn of
 * the main thread, so each session's operations keep their order.
 */
import type { MessagePort } from 'node:worker_threads';
import type { MediaConfig } from '../media-config.js';
import type { MediaCloseResult, NetworkQuality } from '../media-types.js';
import type { PacingClockStats } from '../pacing-clock.js';
import type { SrtpMode } from '../sdp-types.js';
import type { ThreadPriority } from './thread-priority.js';

export interface MediaWorkerData {
  config: Partial<MediaConfig>;
  /** Nice value for the worker thread (thread-priority.ts); undefined leaves it alone. */
  nice?: number;
  /** SCHED_RR priority for the worker thread (0 or absent: none). */
  realtimePriority?: number;
  /**
   * The channel for received audio ('audio' messages), apart from the
   * others, so the main thread can pull pending audio at its yield points
   * (receiveMessageOnPort) without taking other messages out of order.
   */
  audioPort: MessagePort;
}

/** One ordered operation on a session, main → worker. */
export type SessionOp =
  /** μ-law bytes at `offset` of the message's `audio` buffer. */
  | [kind: 'enqueue', id: number, offset: number, length: number]
  | [kind: 'mark', id: number, name: string]
  | [kind: 'clear', id: number]
  | [kind: 'dtmf', id: number, digits: string]
  | [kind: 'answer', id: number, sdp: string]
  | [kind: 'offer', id: number, sdp: string];

export type ToWorker =
  | {
      t: 'create';
      req: number;
      record: boolean;
      inactivityTimeoutSec?: number;
      /** Absent: 'rtp'. With an SRTP mode, `sdesKeys` holds the keys the main thread offers. */
      srtp?: SrtpMode;
      /** a=crypto values (sdes-offer-keys.ts): both threads negotiate with the same keys. */
      sdesKeys?: string[];
    }
  | { t: 'ops'; ops: SessionOp[]; audio: ArrayBuffer | null }
  | { t: 'close'; id: number; reason: string }
  | { t: 'closeAll' };

export type SessionEventName = 'dtmf' | 'mark' | 'stats' | 'inactive' | 'latched';

export interface WorkerMetrics {
  /** The worker thread's kernel id (thread-cpu.ts; null off Linux). */
  tid: number | null;
  /**
   * The worker's event-loop delay over the last report's second, ms, as
   * monitorEventLoopDelay measures it with a 10 ms timer (an idle loop reads
   * about 10: Node records the timer's whole interval).
   */
  loopDelay: { p99Ms: number; maxMs: number };
  active: number;
  pacing: PacingClockStats;
  spacing: Uint32Array;
  audioWait: Uint32Array;
}

export type FromWorker =
  | { t: 'created'; req: number; id: number; port: number; address: string }
  | { t: 'createFailed'; req: number; message: string }
  | { t: 'event'; id: number; name: SessionEventName; data: unknown }
  | { t: 'closed'; id: number; result: MediaCloseResult }
  | { t: 'closedAll' }
  | { t: 'metrics'; metrics: WorkerMetrics }
  | { t: 'priority'; priority: ThreadPriority };

/** Received audio, worker → main, on the audio channel. */
export interface AudioMessage {
  batch: ArrayBuffer;
  count: number;
}

/** Stats as the worker reports them (also the cached value of `stats()` on the main side); `srtp` included. */
export type StatsEvent = NetworkQuality;

// ---- the packed audio batch, worker → main ----
// Per frame: u32 session id, u32 queued bytes of the session's playout
// queue, f64 mediaTimeMs, f64 receivedAt (performance.now(): worker and
// main thread share the process's time origin), u16 length, then the
// μ-law bytes; records start on 8-byte boundaries.

const RECORD_HEADER = 4 + 4 + 8 + 8 + 2;

export function recordSize(payloadLength: number): number {
  return (RECORD_HEADER + payloadLength + 7) & ~7;
}

export interface PackedFrame {
  id: number;
  queuedBytes: number;
  mediaTimeMs: number;
  receivedAt: number;
  ulaw: Buffer;
}

/** Writes one frame at `offset` of `view`/`bytes`; returns the next offset. */
export function packFrame(
  view: DataView,
  bytes: Uint8Array,
  offset: number,
  f: Omit<PackedFrame, 'ulaw'> & { ulaw: Uint8Array },
): number {
  view.setUint32(offset, f.id, true);
  view.setUint32(offset + 4, f.queuedBytes, true);
  view.setFloat64(offset + 8, f.mediaTimeMs, true);
  view.setFloat64(offset + 16, f.receivedAt, true);
  view.setUint16(offset + 24, f.ulaw.length, true);
  bytes.set(f.ulaw, offset + RECORD_HEADER);
  return offset + recordSize(f.ulaw.length);
}

/** Calls `each` for every frame of a batch; `ulaw` views the batch (no copy). */
export function unpackFrames(
  batch: ArrayBuffer,
  count: number,
  each: (f: PackedFrame) => void,
): void {
  const view = new DataView(batch);
  const frame: PackedFrame = {
    id: 0,
    queuedBytes: 0,
    mediaTimeMs: 0,
    receivedAt: 0,
    ulaw: Buffer.alloc(0),
  };
  let offset = 0;
  for (let i = 0; i < count; i++) {
    const length = view.getUint16(offset + 24, true);
    frame.id = view.getUint32(offset, true);
    frame.queuedBytes = view.getUint32(offset + 4, true);
    frame.mediaTimeMs = view.getFloat64(offset + 8, true);
    frame.receivedAt = view.getFloat64(offset + 16, true);
    frame.ulaw = Buffer.from(batch, offset + RECORD_HEADER, length);
    each(frame);
    offset += recordSize(length);
  }
}
