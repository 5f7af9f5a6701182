import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerComponentMetrics } from './component-metrics.js';
import { LatencyHistogram } from './latency-histogram.js';

function histogram(bounds: number[], values: number[]): LatencyHistogram {
  const h = new LatencyHistogram(bounds);
  for (const v of values) h.record(v);
  return h;
}

describe('the per-component metrics', () => {
  it('exposes agent connect, store writes and commits, the media worker loop (taken once per scrape) and CPU by thread', async () => {
    const registry = new Registry();
    const takes: number[] = [];
    registerComponentMetrics(registry, {
      agentConnect: histogram([5, 10], [3, 8]),
      storeWrites: {
        writes: histogram([0.1, 1], [0.05, 0.05, 0.5]),
        commitsFull: histogram([1, 5], [2]),
        commitsNormal: histogram([1, 5], []),
        fsyncs: histogram([1, 5], [0.5, 3, 4]),
        checkpoints: histogram([5, 10], [7]),
      },
      mediaWorker: {
        takeLoopDelay: () => {
          takes.push(1);
          return { p99Ms: 10.5, maxMs: 13 };
        },
      },
      threads: {
        read: () => [
          { thread: 'main', seconds: 1.5 },
          { thread: 'media', seconds: 0.25 },
          { thread: 'other', seconds: 0.1 },
        ],
      },
    });
    const text = await registry.metrics();
    expect(text).toContain('gateway_agent_connect_ms_bucket{le="5"} 1');
    expect(text).toContain('gateway_agent_connect_ms_count 2');
    expect(text).toContain('gateway_store_write_ms_bucket{le="0.1"} 2');
    expect(text).toContain('gateway_store_write_ms_count 3');
    expect(text).toContain('gateway_store_commit_full_ms_count 1');
    expect(text).toContain('gateway_store_commit_normal_ms_count 0');
    expect(text).toContain('gateway_store_fsync_ms_bucket{le="1"} 1');
    expect(text).toContain('gateway_store_fsync_ms_count 3');
    expect(text).toContain('gateway_store_checkpoint_ms_bucket{le="5"} 0');
    expect(text).toContain('gateway_store_checkpoint_ms_count 1');
    expect(text).toContain('gateway_media_worker_loop_delay_p99_ms 10.5');
    expect(text).toContain('gateway_media_worker_loop_delay_max_ms 13');
    expect(takes).toHaveLength(1);
    expect(text).toContain('gateway_thread_cpu_seconds_total{thread="main"} 1.5');
    expect(text).toContain('gateway_thread_cpu_seconds_total{thread="media"} 0.25');
    expect(text).toContain('gateway_thread_cpu_seconds_total{thread="other"} 0.1');
  });

  it('leaves out the store and media worker figures when there are none (PostgreSQL, media on the main thread)', async () => {
    const registry = new Registry();
    registerComponentMetrics(registry, {
      agentConnect: new LatencyHistogram(),
      threads: { read: () => [{ thread: 'other', seconds: 0 }] },
    });
    const text = await registry.metrics();
    expect(text).toContain('gateway_agent_connect_ms_count 0');
    expect(text).not.toContain('gateway_store_');
    expect(text).not.toContain('gateway_media_worker_loop');
  });
});
