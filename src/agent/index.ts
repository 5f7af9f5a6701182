/**
 * The agent bridge's public API. Nothing here imports media/, sip/, calls/,
 * api/ or store/: format conversion is the caller's (calls/) job.
 */
export { AgentConnection, monotonicClock } from './agent-connection.js';
export type {
  AgentClock,
  AgentConnectOptions,
  AgentConnectionState,
  AgentCounters,
} from './agent-connection.js';
export { AgentError } from './agent-error.js';
export type { AgentErrorCode } from './agent-error.js';
export { AgentEncoder, CONNECTED_MESSAGE, mediaFormatOf } from './agent-encoder.js';
export { decodeAgentFrame } from './agent-decoder.js';
export {
  AGENT_AUDIO_FORMATS,
  EXTENSION_EVENTS,
  bytesPerMsOf,
  sampleRateOf,
} from './agent-messages.js';
export type * from './agent-messages.js';
export { DEFAULT_LATENCY_BOUNDS_MS, LatencyHistogram } from '../latency-histogram.js';
export type { LatencySnapshot } from '../latency-histogram.js';
export { renderPrompt } from './render-prompt.js';
export type { PromptSuperVariable } from './render-prompt.js';
