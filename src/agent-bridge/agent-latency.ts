// Process-wide latency of the agent audio path, for /metrics: every call's
// AgentBridge records into these two histograms.
import { LatencyHistogram } from '../agent/index.js';

/** Finer than the agent layer's default: the bridge's own work is sub-millisecond. */
export const AGENT_LATENCY_BOUNDS_MS = [
  0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 20, 50, 100, 200, 500, 1000,
];

/**
 * RTP → WS: a callee frame's arrival on the RTP socket (media clock) until
 * its WebSocket frame is handed to the socket. Suggested metric name
 * `gateway_agent_rtp_to_ws_latency_ms`.
 */
export const agentRtpToWsLatency = new LatencyHistogram(AGENT_LATENCY_BOUNDS_MS);

/**
 * WS → RTP: an agent audio frame's receipt on the WebSocket until it is
 * queued for playout (converted, resampled). The 20 ms RTP pacing and any
 * audio the agent sent ahead of real time come on top. Suggested metric name
 * `gateway_agent_ws_to_rtp_latency_ms`.
 */
export const agentWsToRtpLatency = new LatencyHistogram(AGENT_LATENCY_BOUNDS_MS);

/**
 * A transfer bridged in the gateway (issue 24): a frame's arrival on one
 * leg's RTP socket until it is queued for playout on the other leg (the hop
 * from the media worker to the main thread included; the other leg's 20 ms
 * pacing comes on top). Metric `gateway_transfer_relay_latency_ms`.
 */
export const transferRelayLatency = new LatencyHistogram(AGENT_LATENCY_BOUNDS_MS);

/** A WebSocket set-up takes milliseconds on a LAN, seconds for an agent far away or overloaded. */
export const AGENT_CONNECT_BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

/**
 * The agent's WebSocket: from the connect until it is open (TCP, TLS where
 * wss, the HTTP upgrade), for the connections that opened. Metric
 * `gateway_agent_connect_ms`.
 */
export const agentConnectTime = new LatencyHistogram(AGENT_CONNECT_BOUNDS_MS);
