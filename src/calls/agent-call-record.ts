// What the agent reports lands on the call record: transcript lines in
// `messages` (and `aiDialogue`), the `result` fields, and a permanent opt-out
// when the callee asked never to be called again. Writes never touch
// `status` and do not depend on it: a result may come after the final status.
import type { Logger } from 'pino';
import type { AgentResult, AgentTranscript } from '../agent/index.js';
import type { Clock } from '../clock.js';
import type { CallRecord } from '../store/call-repository.js';
import type { Store } from '../store/store.js';

export type MessageRole = 'Agent' | 'Contact' | 'User' | 'Tool' | 'System';

export interface CallMessage {
  role: MessageRole;
  content: string;
  timestamp: string;
  /** Seconds since the answer. */
  seconds: number;
}

/** The agent's role names → the record's `messages` role and `aiDialogue` role. */
const ROLES: Record<string, [MessageRole, string]> = {
  agent: ['Agent', 'assistant'],
  assistant: ['Agent', 'assistant'],
  bot: ['Agent', 'assistant'],
  ai: ['Agent', 'assistant'],
  user: ['Contact', 'user'],
  contact: ['Contact', 'user'],
  customer: ['Contact', 'user'],
  callee: ['Contact', 'user'],
  human: ['Contact', 'user'],
  operator: ['User', 'user'],
  system: ['System', 'system'],
  developer: ['System', 'developer'],
  tool: ['Tool', 'tool'],
  function: ['Tool', 'function'],
};

export function mapRole(role: string): [MessageRole, string] {
  return ROLES[role.toLowerCase()] ?? ['Contact', 'user'];
}

export class AgentCallRecord {
  /** The agent's own totalCost already added to the record's totalCost. */
  private agentTotalAdded = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly record: CallRecord,
    private readonly log: Logger,
  ) {}

  /** Transcripts are kept only when the call is recorded (recordingEnabled not false). */
  get keepsTranscript(): boolean {
    return this.record.recordingEnabled !== false;
  }

  /** Appends one transcript line; `answeredAtMs` is the answer on the wall clock. */
  transcript(t: AgentTranscript, answeredAtMs: number): void {
    if (!this.keepsTranscript) return;
    const atMs = timestampMs(t.timestamp) ?? this.clock.now();
    const [role, chatRole] = mapRole(t.role);
    const message: CallMessage = {
      role,
      content: t.content,
      timestamp: new Date(atMs).toISOString(),
      seconds: Math.max(0, Math.round((atMs - answeredAtMs) / 10) / 100),
    };
    const current = this.current();
    if (!current) return;
    const messages = Array.isArray(current.messages) ? (current.messages as CallMessage[]) : [];
    const dialogue = Array.isArray(current.aiDialogue) ? (current.aiDialogue as unknown[]) : [];
    this.update({
      messages: [...messages, message],
      aiDialogue: [...dialogue, { role: chatRole, content: t.content }],
    });
  }

  /** Stores the agent's result (every field optional; later results overwrite earlier ones). */
  result(r: AgentResult): void {
    const current = this.current();
    if (!current) return;
    const patch: Partial<CallRecord> = { analysedByAi: 'completed' };
    const copy = [
      'summary',
      'shortSummary',
      'postAnalysisResults',
      'funnelStatus',
      'resolutionStatus',
      'conversionStatus',
      'voiceCost',
      'transcriptionCost',
      'completionCost',
    ] as const;
    for (const key of copy) if (r[key] !== undefined) patch[key] = r[key];
    if (r.costs !== undefined) patch.agentCosts = r.costs;
    if (typeof r.outboundResult === 'string') patch.outboundResultLabel = r.outboundResult;
    else if (r.outboundResult !== undefined) patch.outboundResult = r.outboundResult;
    if (r.totalCost !== undefined) {
      // The record's totalCost also carries the trunk's cost: add the agent's, once.
      const base = typeof current.totalCost === 'number' ? current.totalCost : 0;
      patch.totalCost = round6(base - this.agentTotalAdded + r.totalCost);
      this.agentTotalAdded = r.totalCost;
    }
    this.update(patch);
    if (typeof r.outboundResult === 'object' && r.outboundResult.askedToNeverCallAgain) {
      this.optOut(current);
    }
  }

  /** The callee asked never to be called again: a permanent opt-out for the number reached. */
  private optOut(current: CallRecord): void {
    const attempts = Array.isArray(current.attempts)
      ? (current.attempts as { number?: string; answeredAt?: string }[])
      : [];
    const reached = [...attempts].reverse().find((a) => a.answeredAt && a.number)?.number;
    try {
      this.store.optOuts.save({
        companyId: current.companyId,
        phoneNumber: reached ?? current.phoneNumber,
        permanent: true,
        blockedUntil: null,
        reason: 'asked_to_never_call_again',
        source: 'agent',
        createdAt: new Date(this.clock.now()).toISOString(),
      });
      this.log.info('callee opted out through the agent');
    } catch (err) {
      this.log.error({ err }, 'opt-out from the agent not stored');
    }
  }

  private current(): CallRecord | undefined {
    return this.store.calls.getById(this.record.id);
  }

  private update(patch: Partial<CallRecord>): void {
    try {
      this.store.calls.update(this.record.id, patch, new Date(this.clock.now()).toISOString());
    } catch (err) {
      this.log.error({ err }, 'agent report not stored on the call record');
    }
  }
}

function timestampMs(ts: string | number | undefined): number | undefined {
  if (ts === undefined) return undefined;
  const ms = typeof ts === 'number' ? ts : Date.parse(ts);
  return Number.isFinite(ms) ? ms : undefined;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
