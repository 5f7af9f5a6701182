// What the agent reports, as changes to the call record: transcript lines in
// `messages` (and `aiDialogue`), the `result` fields. Pure: the call session
// applies the patches (it is the only writer of a live record).
import type { CallMessage, CallPatch, CallRecord, MessageRole } from '../../model/call-record.js';
import type { AgentReport, AgentTranscriptLine } from '../ports/agent-link.js';

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

/**
 * One transcript line appended (spec §2.5 `messages`), or undefined when the
 * call is not recorded (`recordingEnabled` false withholds the transcript).
 */
export function transcriptPatch(
  record: Readonly<CallRecord>,
  line: AgentTranscriptLine,
  answeredAtMs: number,
  nowMs: number,
): CallPatch | undefined {
  if (record.recordingEnabled === false) return undefined;
  const atMs = timestampMs(line.timestamp) ?? nowMs;
  const [role, chatRole] = mapRole(line.role);
  const message: CallMessage = {
    role,
    content: line.content,
    timestamp: new Date(atMs).toISOString(),
    seconds: Math.max(0, Math.round((atMs - answeredAtMs) / 10) / 100),
  };
  return {
    messages: [...record.messages, message],
    aiDialogue: [...(record.aiDialogue ?? []), { role: chatRole, content: line.content }],
  };
}

/**
 * The agent's result on the record. `agentTotalBefore` is the agent's total
 * already added to the record's `totalCost` (which also carries the trunk's),
 * so a later result replaces it instead of adding twice.
 */
export function resultPatch(
  record: Readonly<CallRecord>,
  r: AgentReport,
  agentTotalBefore: number,
): CallPatch {
  const patch: CallPatch = { analysedByAi: 'completed' };
  if (r.summary !== undefined) patch.summary = r.summary;
  if (r.shortSummary !== undefined) patch.shortSummary = r.shortSummary;
  if (r.postAnalysisResults !== undefined) patch.postAnalysisResults = r.postAnalysisResults;
  if (r.funnelStatus !== undefined) patch.funnelStatus = r.funnelStatus;
  if (r.resolutionStatus !== undefined) patch.resolutionStatus = r.resolutionStatus;
  if (r.conversionStatus !== undefined) patch.conversionStatus = r.conversionStatus;
  if (r.voiceCost !== undefined) patch.voiceCost = r.voiceCost;
  if (r.transcriptionCost !== undefined) patch.transcriptionCost = r.transcriptionCost;
  if (r.completionCost !== undefined) patch.completionCost = r.completionCost;
  if (r.costs !== undefined) patch.agentCosts = r.costs;
  if (typeof r.outboundResult === 'string') patch.outboundResultLabel = r.outboundResult;
  else if (r.outboundResult !== undefined) patch.outboundResult = r.outboundResult;
  if (r.totalCost !== undefined) {
    patch.totalCost = round6(record.totalCost - agentTotalBefore + r.totalCost);
  }
  return patch;
}

function timestampMs(ts: string | number | undefined): number | undefined {
  if (ts === undefined) return undefined;
  const ms = typeof ts === 'number' ? ts : Date.parse(ts);
  return Number.isFinite(ms) ? ms : undefined;
}

export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
