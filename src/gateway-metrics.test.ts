import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from './agent/index.js';
import { registerGatewayMetrics, spacingSnapshot } from './gateway-metrics.js';

function sources() {
  const rtpToWs = new LatencyHistogram([0.5, 1, 5]);
  const wsToRtp = new LatencyHistogram([0.5, 1, 5]);
  const bins = new Uint32Array(1000);
  const waitBins = new Uint32Array(1000);
  const sip = { messagesIn: 3, messagesOut: 4, activeLegs: 2 };
  return {
    rtpToWs,
    wsToRtp,
    bins,
    waitBins,
    sip,
    s: {
      agentLatency: { rtpToWs, wsToRtp },
      media: {
        activeSessions: 7,
        pacingStats: () => ({ wakeups: 10, ticks: 40, skippedTicks: 1, maxLateMs: 2.5 }),
        sendSpacingHistogram: () => bins.slice(),
        agentAudioWaitHistogram: () => waitBins.slice(),
      },
      spacingBinMs: 0.05,
      calls: { liveCalls: 5 },
      sip: { stats: () => ({ ...sip }) },
    },
  };
}

describe('registerGatewayMetrics', () => {
  it('exposes the bridge latencies as cumulative Prometheus histograms', async () => {
    const { s, rtpToWs } = sources();
    const registry = new Registry();
    registerGatewayMetrics(registry, s);
    for (const ms of [0.2, 0.7, 0.8, 3, 40]) rtpToWs.record(ms);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE gateway_agent_rtp_to_ws_latency_ms histogram');
    expect(text).toContain('gateway_agent_rtp_to_ws_latency_ms_bucket{le="0.5"} 1');
    expect(text).toContain('gateway_agent_rtp_to_ws_latency_ms_bucket{le="1"} 3');
    expect(text).toContain('gateway_agent_rtp_to_ws_latency_ms_bucket{le="5"} 4');
    expect(text).toContain('gateway_agent_rtp_to_ws_latency_ms_bucket{le="+Inf"} 5');
    expect(text).toContain('gateway_agent_rtp_to_ws_latency_ms_count 5');
    expect(text).toContain('gateway_agent_ws_to_rtp_latency_ms_count 0');
  });

  it("exposes the media worker's agent-audio wait in its own buckets", async () => {
    const { s, waitBins } = sources();
    const registry = new Registry();
    registerGatewayMetrics(registry, s);
    waitBins[100] = 4; // 5 ms
    waitBins[380] = 2; // 19 ms
    waitBins[999] = 1; // beyond the range
    const text = await registry.metrics();
    expect(text).toContain('gateway_media_agent_audio_wait_ms_bucket{le="5"} 4');
    expect(text).toContain('gateway_media_agent_audio_wait_ms_bucket{le="17.5"} 4');
    expect(text).toContain('gateway_media_agent_audio_wait_ms_bucket{le="20"} 6');
    expect(text).toContain('gateway_media_agent_audio_wait_ms_bucket{le="40"} 6');
    expect(text).toContain('gateway_media_agent_audio_wait_ms_count 7');
  });

  it('reads pacing, live calls and SIP counters at scrape time', async () => {
    const { s, sip } = sources();
    const registry = new Registry();
    registerGatewayMetrics(registry, s);
    sip.messagesIn = 9;
    const text = await registry.metrics();
    expect(text).toContain('gateway_media_pacing_ticks_total 40');
    expect(text).toContain('gateway_media_pacing_skipped_ticks_total 1');
    expect(text).toContain('gateway_media_pacing_max_late_ms 2.5');
    expect(text).toContain('gateway_media_sessions 7');
    expect(text).toContain('gateway_calls_live 5');
    expect(text).toContain('gateway_sip_messages_in_total 9');
    expect(text).toContain('gateway_sip_active_legs 2');
    expect((await registry.getMetricsAsJSON()).length).toBeGreaterThan(5);
  });

  it("exposes the SIP edge: drops by reason, budgets, trusted addresses and the UDP socket's buffers and kernel drops", async () => {
    const { s } = sources();
    const edge = {
      dropped: { stranger: 5, rate_limited: 7, budget: 0, malformed: 11 },
      silencings: 2,
      trustedAddresses: 3,
      budget: { serverTransactions: 10000, clientTransactions: 500 },
      udp: {
        recvBufferBytes: 8388608,
        sendBufferBytes: 2097152,
        kernelDrops: 4 as number | undefined,
      },
    };
    const registry = new Registry();
    registerGatewayMetrics(registry, { ...s, sip: { ...s.sip, edge: () => edge } });
    edge.dropped.stranger = 6;
    const text = await registry.metrics();
    expect(text).toContain('gateway_sip_dropped_total{reason="stranger"} 6');
    expect(text).toContain('gateway_sip_dropped_total{reason="rate_limited"} 7');
    expect(text).toContain('gateway_sip_dropped_total{reason="budget"} 0');
    expect(text).toContain('gateway_sip_dropped_total{reason="malformed"} 11');
    expect(text).toContain('gateway_sip_stranger_silencings_total 2');
    expect(text).toContain('gateway_sip_trusted_addresses 3');
    expect(text).toContain('gateway_sip_server_transactions_max 10000');
    expect(text).toContain('gateway_sip_client_transactions_max 500');
    expect(text).toContain('gateway_sip_udp_receive_buffer_bytes 8388608');
    expect(text).toContain('gateway_sip_udp_send_buffer_bytes 2097152');
    expect(text).toContain('gateway_sip_udp_kernel_drops_total 4');

    // Where /proc/net/udp is not there, the kernel's counter is left out; without UDP, the socket's figures.
    const noProc = new Registry();
    registerGatewayMetrics(noProc, {
      ...s,
      sip: { ...s.sip, edge: () => ({ ...edge, udp: { ...edge.udp, kernelDrops: undefined } }) },
    });
    const noProcText = await noProc.metrics();
    expect(noProcText).toContain('gateway_sip_udp_receive_buffer_bytes 8388608');
    expect(noProcText).not.toContain('gateway_sip_udp_kernel_drops');
    const noUdp = new Registry();
    registerGatewayMetrics(noUdp, {
      ...s,
      sip: { ...s.sip, edge: () => ({ ...edge, udp: undefined }) },
    });
    const noUdpText = await noUdp.metrics();
    expect(noUdpText).toContain('gateway_sip_dropped_total{reason="stranger"}');
    expect(noUdpText).not.toContain('gateway_sip_udp_');
  });

  it('leaves the SIP counters out without an embedded stack', async () => {
    const { s } = sources();
    const registry = new Registry();
    registerGatewayMetrics(registry, { ...s, sip: undefined });
    expect(await registry.metrics()).not.toContain('gateway_sip_');
  });
});

describe('spacingSnapshot', () => {
  it('folds 0.05 ms bins into buckets, the last bin as overflow', () => {
    const bins = new Uint32Array(1000);
    bins[0] = 10; // 0 ms
    bins[2] = 5; // 0.1 ms
    bins[20] = 3; // 1 ms
    bins[21] = 2; // 1.05 ms
    bins[999] = 1; // beyond the range
    const s = spacingSnapshot(bins, 0.05, [0.1, 1, 2]);
    expect(s.counts).toEqual([15, 3, 2, 1]);
    expect(s.count).toBe(21);
    expect(s.maxMs).toBeCloseTo(49.95);
  });
});
