// What a call needs from its AI agent bridge (src/agent-bridge/agent-bridge.ts
// implements it over the agent WebSocket). The session connects it before
// the INVITE (no phone rings without an agent), starts it at the answer and
// stops it when the call ends. The bridge writes nothing: what the agent
// reports comes back as events, and the session writes them.
import type { Agent } from '../../model/entities.js';
import type {
  CallRecord,
  ConsultPhase,
  OutboundResult,
  TransferMode,
  TransferringStatus,
} from '../../model/call-record.js';
import type { MediaLeg } from './media-port.js';

/** One transcript line as the agent sends it. */
export interface AgentTranscriptLine {
  role: string;
  content: string;
  /** ISO string or Unix ms; absent: when it arrived. */
  timestamp?: string | number;
}

/** The agent's `result` (every field optional; later results overwrite earlier ones). */
export interface AgentReport {
  summary?: string;
  shortSummary?: string;
  postAnalysisResults?: Record<string, unknown>;
  outboundResult?: OutboundResult | string;
  costs?: Record<string, number>;
  voiceCost?: Record<string, number>;
  transcriptionCost?: number;
  completionCost?: Record<string, number | boolean>;
  totalCost?: number;
  funnelStatus?: string;
  resolutionStatus?: string;
  conversionStatus?: string;
}

/**
 * The agent's `transfer` message, its shape checked (the session reads it as
 * the API's transfer body: calls/transfer/transfer-request.ts).
 */
export interface AgentTransferRequest {
  destination: string;
  destinationType?: 'number' | 'sip_uri';
  transferMode?: TransferMode;
  blindTransfer?: boolean;
  transferReason?: string;
  messageToPersonWantingToBeTransferred?: string;
  announceTransferReason?: boolean;
  showCallerId?: boolean;
  secondsToWaitForCallerToAnswer?: number;
  fallbackToBridge?: boolean;
}

/** What the agent is told of a transfer of its call (its `transfer` events). */
export interface TransferProgressEvent {
  status: TransferringStatus;
  destination: string;
  transferMode: TransferMode;
  /** failed / aborted: why (refer_refused, transfer_failed, no_notify, not_supported_yet, …). */
  reason?: string;
  /** The far end's status (the REFER's response or a NOTIFY's sipfrag), when one came. */
  sipStatus?: number;
  sipReason?: string;
  /** Warm or attended: where the consult stands. */
  consultPhase?: ConsultPhase;
  /** Warm or attended, when the target answered: the whisper for the agent to speak to it. */
  messageToPersonWantingToBeTransferred?: string;
  /** Warm or attended, when the target answered: the reason to announce, if asked. */
  transferReason?: string;
}

/** What the agent may do with a consult under way (its `merge`, `cancel` and `swap` messages). */
export type ConsultAction = 'merge' | 'cancel' | 'swap';

export type VoicemailVerdict = 'caller_voice_mail' | 'message_left';

export interface AgentLinkHooks {
  /** The agent asked to end the call (its `hangup`), or its socket closed mid-call. */
  hangup(reason: 'user_hungup' | 'agent_disconnected'): void;
  transcript(line: AgentTranscriptLine): void;
  result(report: AgentReport): void;
  /** Detected by our voicemail detector or declared by the agent. */
  voicemail(verdict: VoicemailVerdict): void;
  /** The agent asked to transfer the call. */
  transfer(request: AgentTransferRequest): void;
  /** The agent's `merge`, `cancel` or `swap` during a warm or attended transfer. */
  consult?(action: ConsultAction): void;
}

export interface AgentLink {
  /** Opens the agent's WebSocket; rejects when the agent is unreachable. */
  connect(): Promise<void>;
  /**
   * The call was answered: stream audio both ways from now on. `parameters`
   * join the call's own in `start.customParameters` (the far end's X- headers).
   */
  start(media: MediaLeg, hooks: AgentLinkHooks, parameters?: Record<string, string>): void;
  /** A DTMF digit from the far end (SIP INFO; RFC 4733 digits come through the media leg). */
  dtmf(digit: string): void;
  /** How a transfer of the call goes (sent as the agent's `transfer` event). */
  transferStatus?(event: TransferProgressEvent): void;
  /** The call ended: `stop` to the agent, then close; resolves once closed (bounded). */
  stop(): Promise<void>;
}

export type AgentLinkFactory = (record: Readonly<CallRecord>, agent: Agent) => AgentLink;
