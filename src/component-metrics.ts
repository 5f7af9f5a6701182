// Where the daemon's time goes, on /metrics (issue 28: the load runner's
// per-component breakdown): the agents' WebSocket set-up, the SQLite file's
// writes and commits, the media worker's event loop, and CPU per thread.
// All read when scraped; this file imports no layer (main.ts hands in the
// sources), as gateway-metrics.ts.
import { Counter, Gauge, type Registry } from 'prom-client';
import { SnapshotHistogram } from './gateway-metrics.js';
import type { LatencySnapshot } from './latency-histogram.js';
import type { ThreadCpuReading } from './thread-cpu.js';

type Snapshotting = { snapshot(): LatencySnapshot };

export interface ComponentMetricSources {
  agentConnect: Snapshotting;
  /** The embedded store's timings (absent on PostgreSQL). */
  storeWrites?: {
    writes: Snapshotting;
    commitsFull: Snapshotting;
    commitsNormal: Snapshotting;
    fsyncs: Snapshotting;
    checkpoints: Snapshotting;
  };
  /** The media worker (absent when media runs on the main thread). */
  mediaWorker?: { takeLoopDelay(): { p99Ms: number; maxMs: number } };
  threads: { read(): ThreadCpuReading[] };
}

export function registerComponentMetrics(registry: Registry, s: ComponentMetricSources): void {
  const registers = [registry];
  new SnapshotHistogram(
    'gateway_agent_connect_ms',
    "The agent's WebSocket, from the connect until it is open (TCP, TLS, the HTTP upgrade), ms; connections that opened.",
    registry,
    () => s.agentConnect.snapshot(),
  );
  const store = s.storeWrites;
  if (store) {
    const histograms: [string, string, Snapshotting][] = [
      [
        'gateway_store_write_ms',
        "A write statement's run on the SQLite file, ms (inside a transaction its commit is not included).",
        store.writes,
      ],
      [
        'gateway_store_commit_full_ms',
        'A commit under synchronous=FULL (the WAL synced to disk), ms: an outermost transaction from BEGIN to COMMIT, or a write outside any.',
        store.commitsFull,
      ],
      [
        'gateway_store_commit_normal_ms',
        "A commit under synchronous=NORMAL (the daemon's: the WAL is synced by the group fsync), ms, counted as the FULL ones are.",
        store.commitsNormal,
      ],
      [
        'gateway_store_fsync_ms',
        "The WAL's group fsync, off the event loop (one for every commit since the last), ms.",
        store.fsyncs,
      ],
      [
        'gateway_store_checkpoint_ms',
        'A checkpoint of the WAL into the database file, in a worker thread off the event loop, ms.',
        store.checkpoints,
      ],
    ];
    for (const [name, help, source] of histograms)
      new SnapshotHistogram(name, help, registry, () => source.snapshot());
  }
  const worker = s.mediaWorker;
  if (worker) {
    // One take per scrape, shared by both gauges (registered, so collected, in this order).
    let taken = { p99Ms: 0, maxMs: 0 };
    new Gauge({
      name: 'gateway_media_worker_loop_delay_p99_ms',
      help: "The media worker's event-loop delay p99 since the last scrape (the worst of its per-second reports), ms, sampled with a 10 ms timer: an idle loop reads about 10.",
      registers,
      collect() {
        taken = worker.takeLoopDelay();
        this.set(taken.p99Ms);
      },
    });
    new Gauge({
      name: 'gateway_media_worker_loop_delay_max_ms',
      help: "The media worker's longest event-loop delay since the last scrape, ms (same sampling).",
      registers,
      collect() {
        this.set(taken.maxMs);
      },
    });
  }
  new Counter({
    name: 'gateway_thread_cpu_seconds_total',
    help: "CPU time (user + system) by thread of the daemon: main, media (the media worker), store (the PostgreSQL store's worker), other (V8's compiler and GC helpers, libuv's pool), s.",
    labelNames: ['thread'],
    registers,
    collect() {
      this.reset();
      for (const r of s.threads.read()) this.inc({ thread: r.thread }, r.seconds);
    },
  });
}
