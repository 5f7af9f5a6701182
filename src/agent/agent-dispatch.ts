/**
 * Turns one frame from the agent into at most one event, counting what it
 * drops. Binary frames are audio only in the PCM formats; in mulaw_8000 they
 * are malformed (Twilio has none). Never throws.
 */
import type { EventEmitter } from 'node:events';
import { decodeAgentFrame } from './agent-decoder.js';
import type {
  AgentAudioFormat,
  AgentConnectionEvents,
  ExtensionEvent,
  ExtensionMessage,
} from './agent-messages.js';

export interface AgentDecoderCounters {
  audioFramesReceived: number;
  audioBytesReceived: number;
  marksReceived: number;
  clearsReceived: number;
  /** transcript, hangup, sendDtmf, transfer, result, voicemail. */
  extensionEventsReceived: number;
  /** Not JSON, no string `event`, an unexpected binary frame, or odd-length PCM. */
  malformedFrames: number;
  /** A known event with the wrong shape (or JSON media in a PCM format). */
  invalidMessages: number;
  unknownEvents: number;
}

export function dispatchFrame(
  target: EventEmitter<AgentConnectionEvents>,
  counters: AgentDecoderCounters,
  format: AgentAudioFormat,
  data: Buffer,
  isBinary: boolean,
  receivedAtMs: number,
): void {
  if (isBinary) {
    if (format === 'mulaw_8000' || data.length % 2 !== 0) {
      counters.malformedFrames += 1;
      return;
    }
    emitAudio(target, counters, format, data, receivedAtMs);
    return;
  }
  const frame = decodeAgentFrame(data.toString('utf8'));
  switch (frame.kind) {
    case 'malformed':
      counters.malformedFrames += 1;
      return;
    case 'invalid':
      counters.invalidMessages += 1;
      return;
    case 'unknown':
      counters.unknownEvents += 1;
      return;
    case 'message':
      break;
  }
  const m = frame.message;
  switch (m.event) {
    case 'media':
      if (format !== 'mulaw_8000') {
        counters.invalidMessages += 1;
        return;
      }
      emitAudio(target, counters, format, m.payload, receivedAtMs);
      return;
    case 'mark':
      counters.marksReceived += 1;
      target.emit('mark', m.name);
      return;
    case 'clear':
      counters.clearsReceived += 1;
      target.emit('clear');
      return;
    default:
      counters.extensionEventsReceived += 1;
      emitExtension(target, m);
      return;
  }
}

/** TypeScript cannot correlate a union's event with its data; the type above guarantees it. */
function emitExtension(target: EventEmitter<AgentConnectionEvents>, m: ExtensionMessage): void {
  (target.emit as (event: ExtensionEvent, data: ExtensionMessage['data']) => boolean).call(
    target,
    m.event,
    m.data,
  );
}

function emitAudio(
  target: EventEmitter<AgentConnectionEvents>,
  counters: AgentDecoderCounters,
  format: AgentAudioFormat,
  payload: Buffer,
  receivedAtMs: number,
): void {
  counters.audioFramesReceived += 1;
  counters.audioBytesReceived += payload.length;
  target.emit('audio', { payload, format, receivedAtMs });
}
