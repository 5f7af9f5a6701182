// What a call needs from its AI agent bridge (src/calls/agent-bridge.ts
// implements it over the agent WebSocket). The session connects it before
// the INVITE (no phone rings without an agent), starts it at the answer and
// stops it when the call ends.
import type { Agent } from '../../store/entities.js';
import type { CallRecord } from '../../store/call-repository.js';
import type { MediaLeg } from './media-port.js';

export interface AgentLinkHooks {
  /** The agent asked to end the call (its `hangup`), or its socket closed mid-call. */
  hangup(reason: 'user_hungup' | 'agent_disconnected'): void;
}

export interface AgentLink {
  /** Opens the agent's WebSocket; rejects when the agent is unreachable. */
  connect(): Promise<void>;
  /** The call was answered: stream audio both ways from now on. */
  start(media: MediaLeg, hooks: AgentLinkHooks): void;
  /** A DTMF digit from the far end (SIP INFO; RFC 4733 digits come through the media leg). */
  dtmf(digit: string): void;
  /** The call ended: `stop` to the agent, then close; resolves once closed (bounded). */
  stop(): Promise<void>;
  /** Voicemail outcome, when detected or declared by the agent. */
  voicemail(): 'caller_voice_mail' | 'message_left' | undefined;
}

export type AgentLinkFactory = (record: CallRecord, agent: Agent) => AgentLink;
