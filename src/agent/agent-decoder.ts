/**
 * Agent → daemon text frames: parse and validate, never throw. Pure.
 *
 * Twilio's bidirectional messages (media, mark, clear) keep their shape; our
 * extensions put their fields under a key named after the event
 * (`{"event":"hangup","hangup":{"reason":"done"}}`); for agent writers'
 * convenience the fields may also sit at the top level (`{"event":"hangup","reason":"done"}`).
 * `streamSid` on incoming messages is not checked, as Twilio does not either.
 */
import type {
  AgentHangup,
  AgentMessage,
  AgentOutboundResult,
  AgentResult,
  AgentSendDtmf,
  AgentTranscript,
  AgentTransfer,
  AgentVoicemail,
  DecodedFrame,
} from './agent-messages.js';

type Json = Record<string, unknown>;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** RFC 4733 §3.2 events 0-15, plus `w`/`W` pauses. */
const DTMF_DIGITS = /^[0-9*#A-Da-dwW]{1,64}$/;
const MAX_TEXT = 100_000;

export function decodeAgentFrame(text: string): DecodedFrame {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'malformed' };
  }
  if (!isObject(parsed) || typeof parsed.event !== 'string') return { kind: 'malformed' };
  const event = parsed.event;
  const decode = Object.hasOwn(DECODERS, event) ? DECODERS[event] : undefined;
  if (decode === undefined) return { kind: 'unknown', event };
  const message = decode(parsed);
  return message === null ? { kind: 'invalid', event } : { kind: 'message', message };
}

const DECODERS: Record<string, (m: Json) => AgentMessage | null> = {
  media(m) {
    const payload = isObject(m.media) ? m.media.payload : undefined;
    if (typeof payload !== 'string' || payload.length === 0 || payload.length % 4 !== 0) {
      return null;
    }
    if (!BASE64.test(payload)) return null;
    return { event: 'media', payload: Buffer.from(payload, 'base64') };
  },
  mark(m) {
    const name = isObject(m.mark) ? m.mark.name : undefined;
    return typeof name === 'string' && name.length > 0 ? { event: 'mark', name } : null;
  },
  clear: () => ({ event: 'clear' }),
  transcript(m) {
    const t = body(m, 'transcript');
    const timestamp = t.timestamp;
    if (!isText(t.role, 64) || typeof t.content !== 'string' || t.content.length > MAX_TEXT) {
      return null;
    }
    if (timestamp !== undefined && typeof timestamp !== 'string' && !isFiniteNumber(timestamp)) {
      return null;
    }
    const transcript: AgentTranscript = { role: t.role, content: t.content };
    if (timestamp !== undefined) transcript.timestamp = timestamp;
    return { event: 'transcript', data: transcript };
  },
  hangup(m) {
    const h = body(m, 'hangup');
    if (h.reason !== undefined && !isText(h.reason, 200)) return null;
    const hangup: AgentHangup = h.reason === undefined ? {} : { reason: h.reason };
    return { event: 'hangup', data: hangup };
  },
  sendDtmf(m) {
    const d = body(m, 'sendDtmf');
    if (typeof d.digits !== 'string' || !DTMF_DIGITS.test(d.digits)) return null;
    const sendDtmf: AgentSendDtmf = { digits: d.digits };
    return { event: 'sendDtmf', data: sendDtmf };
  },
  transfer(m) {
    const t = body(m, 'transfer');
    // `to`, `mode` and `reason` are the names of the first version of this message.
    const destination = t.destination ?? t.to;
    const mode = t.transferMode ?? t.mode;
    const reason = t.transferReason ?? t.reason;
    if (!isText(destination, 256)) return null;
    if (t.destinationType !== undefined && !isOneOf(t.destinationType, DESTINATION_TYPES)) {
      return null;
    }
    if (mode !== undefined && !isOneOf(mode, TRANSFER_MODES)) return null;
    if (reason !== undefined && !isText(reason, 500)) return null;
    const message = t.messageToPersonWantingToBeTransferred;
    if (message !== undefined && !isText(message, 2000)) return null;
    for (const flag of [
      'blindTransfer',
      'announceTransferReason',
      'showCallerId',
      'fallbackToBridge',
    ] as const) {
      if (t[flag] !== undefined && !isBool(t[flag])) return null;
    }
    const wait = t.secondsToWaitForCallerToAnswer;
    if (
      wait !== undefined &&
      !(Number.isInteger(wait) && (wait as number) >= 1 && (wait as number) <= 300)
    ) {
      return null;
    }
    const transfer: AgentTransfer = { destination };
    if (t.destinationType !== undefined) transfer.destinationType = t.destinationType;
    if (mode !== undefined) transfer.transferMode = mode;
    if (reason !== undefined) transfer.transferReason = reason;
    if (message !== undefined) transfer.messageToPersonWantingToBeTransferred = message;
    if (isBool(t.blindTransfer)) transfer.blindTransfer = t.blindTransfer;
    if (isBool(t.announceTransferReason))
      transfer.announceTransferReason = t.announceTransferReason;
    if (isBool(t.showCallerId)) transfer.showCallerId = t.showCallerId;
    if (isBool(t.fallbackToBridge)) transfer.fallbackToBridge = t.fallbackToBridge;
    if (typeof wait === 'number') transfer.secondsToWaitForCallerToAnswer = wait;
    return { event: 'transfer', data: transfer };
  },
  // A warm or attended transfer's next step: `{"event":"merge"}`, `cancel`, `swap`.
  merge: () => ({ event: 'consult', data: { action: 'merge' } }),
  cancel: () => ({ event: 'consult', data: { action: 'cancel' } }),
  swap: () => ({ event: 'consult', data: { action: 'swap' } }),
  result(m) {
    const r = body(m, 'result');
    const result: AgentResult = {};
    for (const key of RESULT_TEXT_FIELDS) {
      const v = r[key];
      if (v === undefined) continue;
      if (typeof v !== 'string' || v.length > MAX_TEXT) return null;
      result[key] = v;
    }
    if (r.postAnalysisResults !== undefined) {
      if (!isObject(r.postAnalysisResults)) return null;
      result.postAnalysisResults = r.postAnalysisResults;
    }
    if (r.costs !== undefined) {
      if (!isObject(r.costs) || !Object.values(r.costs).every(isFiniteNumber)) return null;
      result.costs = r.costs as Record<string, number>;
    }
    if (r.outboundResult !== undefined) {
      const o = outboundResult(r.outboundResult);
      if (o === null) return null;
      result.outboundResult = o;
    }
    if (r.voiceCost !== undefined) {
      if (!isObject(r.voiceCost) || !Object.values(r.voiceCost).every(isFiniteNumber)) return null;
      result.voiceCost = r.voiceCost as Record<string, number>;
    }
    if (r.completionCost !== undefined) {
      const c = r.completionCost;
      if (!isObject(c) || !Object.values(c).every((v) => isFiniteNumber(v) || isBool(v)))
        return null;
      result.completionCost = c as Record<string, number | boolean>;
    }
    for (const key of ['transcriptionCost', 'totalCost'] as const) {
      const v = r[key];
      if (v === undefined) continue;
      if (!isFiniteNumber(v)) return null;
      result[key] = v;
    }
    return { event: 'result', data: result };
  },
  voicemail(m) {
    const v = body(m, 'voicemail');
    if (v.messageLeft !== undefined && typeof v.messageLeft !== 'boolean') return null;
    const voicemail: AgentVoicemail = { messageLeft: v.messageLeft === true };
    return { event: 'voicemail', data: voicemail };
  },
};

const DESTINATION_TYPES = ['number', 'sip_uri'] as const;
const TRANSFER_MODES = ['blind', 'warm', 'attended'] as const;

function isOneOf<T extends string>(v: unknown, values: readonly T[]): v is T {
  return typeof v === 'string' && (values as readonly string[]).includes(v);
}

const RESULT_TEXT_FIELDS = [
  'summary',
  'shortSummary',
  'funnelStatus',
  'resolutionStatus',
  'conversionStatus',
] as const;

const OUTCOME_FLAGS = [
  'humanJoined',
  'humanResponded',
  'askedToNeverCallAgain',
  'askedToCallBackLater',
] as const;

/** A label (older agents) or the spec's object; null when malformed. */
function outboundResult(v: unknown): AgentOutboundResult | string | null {
  if (typeof v === 'string') return v.length <= MAX_TEXT ? v : null;
  if (!isObject(v)) return null;
  const out: AgentOutboundResult = {};
  for (const key of OUTCOME_FLAGS) {
    if (v[key] === undefined) continue;
    if (!isBool(v[key])) return null;
    out[key] = v[key];
  }
  const at = v.dateTimeToCallBack;
  if (at !== undefined) {
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) return null;
    out.dateTimeToCallBack = at;
  }
  return out;
}

function isBool(v: unknown): v is boolean {
  return typeof v === 'boolean';
}

/** The event's fields: under the key named after the event, else the top level. */
function body(m: Json, key: string): Json {
  const nested = m[key];
  return isObject(nested) ? nested : m;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isText(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= max;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}
