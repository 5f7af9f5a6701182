import { describe, expect, it } from 'vitest';
import { daemonFigures, parseHistogram, threadCpuDiff, windowQuantiles } from './daemon-metrics.js';

const scrape = (counts: [string, number][], skipped: number, live: number, sum = 1): string =>
  [
    '# TYPE gateway_agent_rtp_to_ws_latency_ms histogram',
    ...counts.map(([le, n]) => `gateway_agent_rtp_to_ws_latency_ms_bucket{le="${le}"} ${n}`),
    `gateway_agent_rtp_to_ws_latency_ms_sum ${sum}`,
    `gateway_agent_rtp_to_ws_latency_ms_count ${counts[counts.length - 1]![1]}`,
    `gateway_media_pacing_skipped_ticks_total ${skipped}`,
    `gateway_calls_live ${live}`,
  ].join('\n');

describe('daemon figures between two scrapes', () => {
  it('parses cumulative buckets, +Inf included', () => {
    const h = parseHistogram(
      scrape(
        [
          ['0.5', 2],
          ['+Inf', 3],
        ],
        0,
        0,
      ),
      'gateway_agent_rtp_to_ws_latency_ms',
    );
    expect(h?.buckets).toEqual([
      [0.5, 2],
      [Infinity, 3],
    ]);
    expect(h?.count).toBe(3);
  });

  it("gives the window's quantiles from the bucket differences", () => {
    const before = scrape(
      [
        ['0.5', 100],
        ['1', 100],
        ['5', 100],
        ['+Inf', 100],
      ],
      2,
      10,
    );
    // 100 new values in the window: 90 at ≤ 0.5, 9 in (0.5, 1], 1 in (1, 5]
    const after = scrape(
      [
        ['0.5', 190],
        ['1', 199],
        ['5', 200],
        ['+Inf', 200],
      ],
      5,
      12,
      41.5,
    );
    const f = daemonFigures(before, after);
    expect(f.rtpToWsMs).toEqual({ count: 100, sum: 40.5, p50: 0.5, p99: 1 });
    expect(f.pacingSkippedTicks).toBe(3);
    expect(f.liveCalls).toBe(12);
    expect(f.wsToRtpMs.count).toBe(0);
  });

  it('has no quantiles for an empty window', () => {
    const h = parseHistogram(scrape([['+Inf', 4]], 0, 0), 'gateway_agent_rtp_to_ws_latency_ms');
    expect(windowQuantiles(h, h)).toMatchObject({ count: 0 });
    expect(windowQuantiles(h, h).p99).toBeNaN();
  });

  it("gives each thread's CPU seconds in the window; a thread first seen in the window counts from 0", () => {
    const before = [
      'gateway_thread_cpu_seconds_total{thread="main"} 10.5',
      'gateway_thread_cpu_seconds_total{thread="other"} 1',
    ].join('\n');
    const after = [
      'gateway_thread_cpu_seconds_total{thread="main"} 12.75',
      'gateway_thread_cpu_seconds_total{thread="media"} 0.5',
      'gateway_thread_cpu_seconds_total{thread="other"} 1.25',
    ].join('\n');
    expect(threadCpuDiff(before, after)).toEqual({ main: 2.25, media: 0.5, other: 0.25 });
  });
});
