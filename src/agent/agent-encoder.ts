/**
 * Daemon → agent text frames, in the Twilio Media Streams shape
 * (https://www.twilio.com/docs/voice/media-streams/websocket-messages):
 * every message but `connected` carries `sequenceNumber` (a string counting
 * from "1") and `streamSid`; `media.chunk` counts media messages from "1";
 * `media.timestamp` is ms since the stream started. Pure: no I/O, no clock.
 *
 * `media` is on the hot path (50 a second per call): it is built with a
 * template string around the pre-escaped streamSid, not JSON.stringify.
 */
import type { AgentAudioFormat, AgentCallContext } from './agent-messages.js';
import { sampleRateOf } from './agent-messages.js';

export interface StreamIdentity {
  accountSid: string;
  callSid: string;
  streamSid: string;
}

export interface StartMessageOptions {
  audioFormat: AgentAudioFormat;
  /** Twilio `<Parameter>`s; ours are the call's dynamicVariables. */
  customParameters: Record<string, string>;
  /** Our extension `start.call`, carried as given. */
  call: AgentCallContext;
}

/** Twilio's one `connected` message. */
export const CONNECTED_MESSAGE = '{"event":"connected","protocol":"Call","version":"1.0.0"}';

/** `start.mediaFormat` for an audio format. */
export function mediaFormatOf(format: AgentAudioFormat): {
  encoding: string;
  sampleRate: number;
  channels: 1;
} {
  const encoding = format === 'mulaw_8000' ? 'audio/x-mulaw' : 'audio/x-pcm-s16le';
  return { encoding, sampleRate: sampleRateOf(format), channels: 1 };
}

export class AgentEncoder {
  private sequence = 0;
  private chunk = 0;
  private readonly streamSidJson: string;

  constructor(private readonly id: StreamIdentity) {
    this.streamSidJson = JSON.stringify(id.streamSid);
  }

  /** Messages sent so far that carried a sequenceNumber. */
  get lastSequenceNumber(): number {
    return this.sequence;
  }

  start(opts: StartMessageOptions): string {
    return JSON.stringify({
      event: 'start',
      sequenceNumber: this.next(),
      start: {
        accountSid: this.id.accountSid,
        streamSid: this.id.streamSid,
        callSid: this.id.callSid,
        tracks: ['inbound'],
        customParameters: opts.customParameters,
        mediaFormat: mediaFormatOf(opts.audioFormat),
        call: opts.call,
      },
      streamSid: this.id.streamSid,
    });
  }

  /** One `media` message; `timestampMs` is rounded to whole ms. */
  media(payload: Buffer, timestampMs: number): string {
    this.chunk += 1;
    const ts = Math.max(0, Math.round(timestampMs));
    return (
      `{"event":"media","sequenceNumber":"${this.next()}","media":{"track":"inbound",` +
      `"chunk":"${this.chunk}","timestamp":"${ts}","payload":"${payload.toString('base64')}"},` +
      `"streamSid":${this.streamSidJson}}`
    );
  }

  dtmf(digit: string): string {
    return JSON.stringify({
      event: 'dtmf',
      streamSid: this.id.streamSid,
      sequenceNumber: this.next(),
      dtmf: { track: 'inbound_track', digit },
    });
  }

  mark(name: string): string {
    return JSON.stringify({
      event: 'mark',
      streamSid: this.id.streamSid,
      sequenceNumber: this.next(),
      mark: { name },
    });
  }

  /** One of our extension events, `{event, streamSid, sequenceNumber, [event]: payload}`. */
  event(name: string, payload: Record<string, unknown>): string {
    return JSON.stringify({
      event: name,
      streamSid: this.id.streamSid,
      sequenceNumber: this.next(),
      [name]: payload,
    });
  }

  stop(): string {
    return JSON.stringify({
      event: 'stop',
      sequenceNumber: this.next(),
      streamSid: this.id.streamSid,
      stop: { accountSid: this.id.accountSid, callSid: this.id.callSid },
    });
  }

  private next(): string {
    this.sequence += 1;
    return String(this.sequence);
  }
}
