/**
 * Shapes of what crosses the agent WebSocket. The daemon → agent direction is
 * Twilio Media Streams (https://www.twilio.com/docs/voice/media-streams/websocket-messages);
 * the agent → daemon extensions are ours, in the same JSON style
 * (`{ "event": X, X: {...} }`). docs/agent-protocol.md is the reference.
 */

/** Per agent: Twilio JSON with base64 μ-law, or raw PCM s16le in binary frames. */
export const AGENT_AUDIO_FORMATS = ['mulaw_8000', 'pcm_8000', 'pcm_16000', 'pcm_24000'] as const;
export type AgentAudioFormat = (typeof AGENT_AUDIO_FORMATS)[number];

/** Sample rate in Hz of an agent audio format. */
export function sampleRateOf(format: AgentAudioFormat): 8000 | 16000 | 24000 {
  switch (format) {
    case 'mulaw_8000':
    case 'pcm_8000':
      return 8000;
    case 'pcm_16000':
      return 16000;
    case 'pcm_24000':
      return 24000;
  }
}

/** Bytes per millisecond of audio in a format (μ-law: 1 byte a sample; PCM: 2). */
export function bytesPerMsOf(format: AgentAudioFormat): number {
  const perSample = format === 'mulaw_8000' ? 1 : 2;
  return (sampleRateOf(format) / 1000) * perSample;
}

/**
 * `start.call`: the call context the caller hands over. Carried as given; the
 * fields named here are the ones the calls domain fills (DESIGN "Agent protocol").
 */
export interface AgentCallContext {
  agentId?: string;
  agentVersion?: number;
  contextForAi?: string;
  /** The agent's prompt with `{{name}}` placeholders resolved (see renderPrompt). */
  prompt?: string;
  welcomeMessage?: string;
  isWelcomeMessageAIGenerated?: boolean;
  metadata?: Record<string, string>;
  fromNumber?: string;
  toNumber?: string;
  direction?: 'outbound' | 'inbound';
  [key: string]: unknown;
}

// ---- agent → daemon, after validation ----

export interface AgentTranscript {
  /** Who spoke, as the agent names it: normally `agent` or `user`. */
  role: string;
  content: string;
  /** As sent by the agent (ISO 8601 string or epoch ms), if any. */
  timestamp?: string | number;
}

export interface AgentHangup {
  reason?: string;
}

export interface AgentSendDtmf {
  /** 0-9, *, #, A-D; `w`/`W` (0.5 s / 1 s pauses) are passed through. */
  digits: string;
}

export interface AgentTransfer {
  /** E.164 number or SIP URI to transfer to (older agents: `to`). */
  destination: string;
  /** `number` or `sip_uri`; by default from the destination's form. */
  destinationType?: 'number' | 'sip_uri';
  /** `blind` (REFER) by default; `warm` / `attended` are answered `not_supported_yet` (older agents: `mode`). */
  transferMode?: 'blind' | 'warm' | 'attended';
  /** Deprecated alias: true = blind. */
  blindTransfer?: boolean;
  /** Older agents: `reason`. */
  transferReason?: string;
  messageToPersonWantingToBeTransferred?: string;
  announceTransferReason?: boolean;
  showCallerId?: boolean;
  secondsToWaitForCallerToAnswer?: number;
  /** A refused REFER: dial the destination as a second leg and bridge (issue 24). */
  fallbackToBridge?: boolean;
}

export interface AgentResult {
  summary?: string;
  shortSummary?: string;
  postAnalysisResults?: Record<string, unknown>;
  /** The spec's outcome object, or (older agents) a free-text label. */
  outboundResult?: AgentOutboundResult | string;
  /** Cost items, e.g. `{ llm: 0.012, tts: 0.004 }`, in the agent's currency. */
  costs?: Record<string, number>;
  /** The record's cost fields, as the agent computed them (numbers; flags allowed in completionCost). */
  voiceCost?: Record<string, number>;
  transcriptionCost?: number;
  completionCost?: Record<string, number | boolean>;
  /** The agent's own total (added to the call's totalCost, which also carries the trunk's). */
  totalCost?: number;
  funnelStatus?: string;
  resolutionStatus?: string;
  conversionStatus?: string;
}

/** `result.outboundResult` as the call record keeps it. */
export interface AgentOutboundResult {
  humanJoined?: boolean;
  /** The callee spoke (not the SIP answer, not a voicemail). */
  humanResponded?: boolean;
  askedToNeverCallAgain?: boolean;
  askedToCallBackLater?: boolean;
  /** ISO 8601 date-time the callee asked to be called back at. */
  dateTimeToCallBack?: string;
}

/** The agent's `merge`, `cancel` or `swap` during a warm or attended transfer. */
export interface AgentConsult {
  action: 'merge' | 'cancel' | 'swap';
}

export interface AgentVoicemail {
  /** True when the agent has left its message (→ `message_left`), else just detected. */
  messageLeft: boolean;
}

export interface AgentAudio {
  /** μ-law bytes (mulaw_8000) or PCM s16le bytes (pcm_*), as the agent sent them. */
  payload: Buffer;
  format: AgentAudioFormat;
  /** Connection clock at receipt. */
  receivedAtMs: number;
}

export interface AgentCloseInfo {
  code: number;
  reason: string;
  /** True when we closed (stop()/close()); false when the agent or network did. */
  byUs: boolean;
}

/** Events of an AgentConnection. */
export interface AgentConnectionEvents {
  audio: [AgentAudio];
  mark: [string];
  clear: [];
  transcript: [AgentTranscript];
  hangup: [AgentHangup];
  sendDtmf: [AgentSendDtmf];
  transfer: [AgentTransfer];
  consult: [AgentConsult];
  result: [AgentResult];
  voicemail: [AgentVoicemail];
  close: [AgentCloseInfo];
  error: [Error];
}

/** Agent events that are our extensions to Twilio's protocol. */
export const EXTENSION_EVENTS = [
  'transcript',
  'hangup',
  'sendDtmf',
  'transfer',
  'consult',
  'result',
  'voicemail',
] as const;
export type ExtensionEvent = (typeof EXTENSION_EVENTS)[number];

/** An extension message: the event's name and its validated fields. */
export type ExtensionMessage = {
  [K in ExtensionEvent]: { event: K; data: AgentConnectionEvents[K][0] };
}[ExtensionEvent];

/** One validated inbound text message (binary audio comes separately). */
export type AgentMessage =
  | { event: 'media'; payload: Buffer }
  | { event: 'mark'; name: string }
  | { event: 'clear' }
  | ExtensionMessage;

/** What the decoder makes of one text frame. */
export type DecodedFrame =
  | { kind: 'message'; message: AgentMessage }
  /** Not JSON, or JSON but not an object with a string `event`. */
  | { kind: 'malformed' }
  /** A known event whose fields have the wrong shape. */
  | { kind: 'invalid'; event: string }
  /** An event we do not know (ignored, as Twilio ignores unknown ones). */
  | { kind: 'unknown'; event: string };
