/**
 * The media engine on a worker thread, seen from the main thread: the same
 * surface as MediaEngine/MediaSession (it fits the calls domain's MediaPort),
 * with the RTP sockets, the pacing clock and the sessions in media-worker.ts.
 * Offer/answer runs here as well, on the same settings, so `createOffer`,
 * `applyAnswer` and `answerOffer` stay synchronous and throw the same
 * MediaErrors; the worker repeats the negotiation on the SDP it is sent.
 */
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
  type ResourceLimits,
} from 'node:worker_threads';
import { registerUrgentWork } from '../../urgent-work.js';
import { DEFAULT_MEDIA_CONFIG, type MediaConfig } from '../media-config.js';
import type { CreateSessionOptions } from '../media-engine.js';
import { MediaError } from '../media-error.js';
import {
  generateSdesOfferKeys,
  sdesOfferKeysToValues,
  type SdesOfferKeys,
} from '../sdes-offer-keys.js';
import type { SrtpMode } from '../sdp-types.js';
import { SPACING_BINS, type PacingClockStats } from '../pacing-clock.js';
import {
  type AudioMessage,
  unpackFrames,
  type FromWorker,
  type MediaWorkerData,
  type PackedFrame,
  type SessionOp,
  type ToWorker,
  type WorkerMetrics,
} from './media-worker-protocol.js';
import { RemoteMediaSession } from './remote-media-session.js';
import type { ThreadPriority } from './thread-priority.js';
import { startWorkerOldSpaceAt } from './worker-heap.js';

export { RemoteMediaSession, type ReceivedFrame } from './remote-media-session.js';

export interface WorkerMediaEngineOptions {
  /** The worker failed (an uncaught error, or it exited): live sessions report 'inactive'. */
  onFailure?: (err: Error) => void;
  /** Nice value for the worker thread (negative: ahead of the main thread; needs CAP_SYS_NICE). */
  nice?: number;
  /** SCHED_RR priority for the worker thread (thread-priority.ts; 0: none, nice only). */
  realtimePriority?: number;
  /** How the nice value (and real-time priority) was applied, once the worker has started. */
  onPriority?: (priority: ThreadPriority) => void;
  /** Size the worker's old generation starts at, MB (worker-heap.ts; 0: V8's default). */
  oldSpaceMb?: number;
}

/**
 * The worker's young generation, MB (V8 splits it into two semi-spaces and
 * a large-object space: 3 MB is 1 MB semi-spaces). Every received datagram
 * is a Buffer with its own ArrayBuffer, and a scavenge frees the ones that
 * died; with V8's default semi-space a scavenge came about once a second and
 * held the pacing clock 2-5 ms (p50/p90 at 100-200 calls), long enough to
 * show in the send spacing. At 1 MB they come about 8 times a second and
 * take 0.3-0.9 ms, for well under 1 % of a core more in total
 * (sip-test/load/media-bench.ts with --max-semi-space-size, README).
 */
export const WORKER_YOUNG_GENERATION_MB = 3;

interface PendingCreate {
  resolve: (s: RemoteMediaSession) => void;
  reject: (err: Error) => void;
  srtp: SrtpMode;
  sdesKeys: SdesOfferKeys | null;
}

export class WorkerMediaEngine {
  readonly config: MediaConfig;
  private readonly worker: Worker;
  /** Received audio from the worker (see MediaWorkerData.audioPort). */
  private readonly audioPort: MessagePort;
  private readonly unregisterDrain: () => void;
  private readonly sessions = new Map<number, RemoteMediaSession>();
  private readonly creates = new Map<number, PendingCreate>();
  private nextReq = 1;
  private ops: SessionOp[] = [];
  /** Agent audio of the queued 'enqueue' ops, copied into one transferred buffer at flush. */
  private audio: Uint8Array[] = [];
  private audioBytes = 0;
  private flushing = false;
  private failed: Error | null = null;
  private closing: Promise<void> | null = null;
  private closedAll: (() => void) | null = null;
  /** The worst of the worker's per-second event-loop delays since `takeLoopDelay`. */
  private worstLoopDelay = { p99Ms: 0, maxMs: 0 };
  private metrics: WorkerMetrics = {
    tid: null,
    loopDelay: { p99Ms: 0, maxMs: 0 },
    active: 0,
    pacing: { wakeups: 0, ticks: 0, skippedTicks: 0, maxLateMs: 0 },
    spacing: new Uint32Array(SPACING_BINS),
    audioWait: new Uint32Array(SPACING_BINS),
  };

  constructor(
    config: Partial<MediaConfig> = {},
    private readonly options: WorkerMediaEngineOptions = {},
  ) {
    this.config = { ...DEFAULT_MEDIA_CONFIG, ...config };
    const { port1, port2 } = new MessageChannel();
    this.audioPort = port1;
    const data: MediaWorkerData = { config: this.config, audioPort: port2 };
    if (options.nice !== undefined) data.nice = options.nice;
    if (options.realtimePriority) data.realtimePriority = options.realtimePriority;
    const here = import.meta.url;
    const resourceLimits = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
    startWorkerOldSpaceAt(options.oldSpaceMb ?? 0);
    // The sources run under tsx (npm start, the tests): boot the .ts entry through it.
    this.worker = here.endsWith('.ts')
      ? new Worker(new URL('../../tsx-worker-boot.mjs', here), {
          workerData: { ...data, entry: new URL('./media-worker.ts', here).href },
          transferList: [port2],
          resourceLimits,
        })
      : new Worker(new URL('./media-worker.js', here), {
          workerData: data,
          transferList: [port2],
          resourceLimits,
        });
    this.audioPort.on('message', (m: AudioMessage) => this.onAudio(m));
    // long main-thread chains (call set-up) pull pending audio at their yield points
    this.unregisterDrain = registerUrgentWork(this.drainAudio);
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`media worker exited with ${code}`)));
  }

  /** Set once the worker failed; sessions then end at once. */
  get failure(): Error | null {
    return this.failed;
  }

  /** The worker's heap limits as its isolate applied them, MB (empty until it has started). */
  get resourceLimits(): ResourceLimits {
    return this.worker.resourceLimits ?? {};
  }

  get activeSessions(): number {
    return this.sessions.size;
  }

  /** The worker's pacing counters, as of its last report (every second). */
  pacingStats(): PacingClockStats {
    return { ...this.metrics.pacing };
  }

  /** The worker thread's kernel id, once it has reported (thread-cpu.ts). */
  get threadId(): number | null {
    return this.metrics.tid;
  }

  /**
   * The worst per-second event-loop delay p99 and maximum the worker
   * reported since the last call (as prom-client resets the main thread's at
   * each scrape), ms.
   */
  takeLoopDelay(): { p99Ms: number; maxMs: number } {
    const worst = this.worstLoopDelay;
    this.worstLoopDelay = { p99Ms: 0, maxMs: 0 };
    return worst;
  }

  /** The worker's send-spacing histogram, as of its last report (every second). */
  sendSpacingHistogram(): Uint32Array {
    return this.metrics.spacing.slice();
  }

  /** The worker's agent-audio wait histogram (AgentAudioWait), as of its last report. */
  agentAudioWaitHistogram(): Uint32Array {
    return this.metrics.audioWait.slice();
  }

  createSession(options: CreateSessionOptions = {}): Promise<RemoteMediaSession> {
    if (this.failed) return Promise.reject(this.failed);
    const req = this.nextReq++;
    const m: ToWorker = { t: 'create', req, record: options.record ?? false };
    if (options.inactivityTimeoutSec !== undefined) {
      m.inactivityTimeoutSec = options.inactivityTimeoutSec;
    }
    const srtp = options.srtp ?? 'rtp';
    // SDES keys made here: this thread writes the offers, the worker protects with them
    const sdesKeys = srtp === 'rtp' ? null : generateSdesOfferKeys();
    if (sdesKeys) {
      m.srtp = srtp;
      m.sdesKeys = sdesOfferKeysToValues(sdesKeys);
    }
    return new Promise((resolve, reject) => {
      this.creates.set(req, { resolve, reject, srtp, sdesKeys });
      this.worker.postMessage(m);
    });
  }

  /** Closes every session, then the worker (drain on shutdown). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.failed) {
        this.flushOps();
        await new Promise<void>((resolve) => {
          this.closedAll = resolve;
          this.worker.postMessage({ t: 'closeAll' } satisfies ToWorker);
        });
      }
      this.worker.removeAllListeners('exit');
      await this.worker.terminate();
      this.stopAudio();
    })();
    return this.closing;
  }

  /** Queues a session operation; all of one event-loop turn go to the worker in order. */
  queue(op: SessionOp): void {
    this.ops.push(op);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(this.flushOps);
  }

  /** Queues agent audio for session `id` (kept by reference until the flush copies it). */
  queueAudio(id: number, ulaw: Uint8Array): void {
    this.audio.push(ulaw);
    this.queue(['enqueue', id, this.audioBytes, ulaw.length]);
    this.audioBytes += ulaw.length;
  }

  /** Sends the queued operations now (before a close, which must come after them). */
  readonly flushOps = (): void => {
    this.flushing = false;
    if (this.ops.length === 0 || this.failed) return;
    let audio: ArrayBuffer | null = null;
    if (this.audioBytes > 0) {
      audio = new ArrayBuffer(this.audioBytes);
      const bytes = new Uint8Array(audio);
      let offset = 0;
      for (const chunk of this.audio) {
        bytes.set(chunk, offset);
        offset += chunk.length;
      }
    }
    const m: ToWorker = { t: 'ops', ops: this.ops, audio };
    this.ops = [];
    this.audio = [];
    this.audioBytes = 0;
    this.worker.postMessage(m, audio ? [audio] : []);
  };

  closeSession(id: number, reason: string): void {
    this.flushOps();
    if (!this.failed) this.worker.postMessage({ t: 'close', id, reason } satisfies ToWorker);
  }

  private onMessage(m: FromWorker): void {
    switch (m.t) {
      case 'event':
        this.sessions.get(m.id)?.onWorkerEvent(m.name, m.data);
        break;
      case 'created': {
        const pending = this.creates.get(m.req);
        this.creates.delete(m.req);
        const srtp = { mode: pending?.srtp ?? 'rtp', keys: pending?.sdesKeys ?? null } as const;
        const session = new RemoteMediaSession(this, m.id, m.port, m.address, srtp);
        this.sessions.set(m.id, session);
        pending?.resolve(session);
        break;
      }
      case 'createFailed': {
        const pending = this.creates.get(m.req);
        this.creates.delete(m.req);
        pending?.reject(new MediaError('no_rtp_port_available', m.message));
        break;
      }
      case 'closed':
        this.drainAudio(); // the worker sent the session's last frames before this
        this.sessions.get(m.id)?.onClosed(m.result);
        this.sessions.delete(m.id);
        break;
      case 'closedAll':
        this.closedAll?.();
        break;
      case 'metrics':
        this.metrics = m.metrics;
        this.worstLoopDelay = {
          p99Ms: Math.max(this.worstLoopDelay.p99Ms, m.metrics.loopDelay.p99Ms),
          maxMs: Math.max(this.worstLoopDelay.maxMs, m.metrics.loopDelay.maxMs),
        };
        break;
      case 'priority':
        this.options.onPriority?.(m.priority);
        break;
    }
  }

  private onAudio(m: AudioMessage): void {
    unpackFrames(m.batch, m.count, this.deliver);
  }

  /** Delivers the audio batches already waiting on the channel, now. */
  readonly drainAudio = (): void => {
    for (
      let m = receiveMessageOnPort(this.audioPort);
      m;
      m = receiveMessageOnPort(this.audioPort)
    ) {
      this.onAudio(m.message as AudioMessage);
    }
  };

  private readonly deliver = (f: PackedFrame): void => {
    this.sessions.get(f.id)?.onWorkerFrame(f);
  };

  /** No more received audio: off the yield points, and the port closed (an open one keeps the process alive). */
  private stopAudio(): void {
    this.unregisterDrain();
    this.audioPort.close();
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    this.stopAudio();
    this.options.onFailure?.(err);
    for (const pending of this.creates.values()) pending.reject(err);
    this.creates.clear();
    for (const session of this.sessions.values()) session.onWorkerGone();
    this.sessions.clear();
    this.closedAll?.();
  }
}
