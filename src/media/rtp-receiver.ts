import { ALAW_DECODE, ALAW_TO_ULAW, transcode, ULAW_DECODE } from './g711.js';
import type { ReceivedAudioFrame, ReceivedDtmf } from './media-types.js';
import { ReceiveStatistics } from './receive-statistics.js';
import type { RtpHeader } from './rtp-packet.js';
import { dtmfEventToDigit, parseTelephoneEvent } from './telephone-event.js';
import { TelephoneEventReceiver } from './telephone-event-receiver.js';
import type { WavRecorder } from './wav-recorder.js';

/**
 * The receive half of a session, after the datagram is known to be RTP
 * from the right source: per-source statistics (a new SSRC starts them
 * over, RFC 3550 §8.2), payload-type dispatch, RFC 4733 digits folded to
 * one report per event, and one reused frame object per audio packet.
 */
export interface RtpReceiverSink {
  audio(frame: ReceivedAudioFrame): void;
  dtmf(digit: ReceivedDtmf): void;
}

export class RtpReceiver {
  stats = new ReceiveStatistics();
  remoteSsrc = -1;
  /** Local time of the last accepted packet. */
  lastPacketAt = -1;
  unknownPayloadType = 0;
  private firstTimestamp = 0;
  /** 1 for the payload types announced as telephone-event (a table: this is per packet). */
  private readonly eventPayloadTypes = new Uint8Array(128);
  private readonly events = new TelephoneEventReceiver();
  private readonly frame: ReceivedAudioFrame = {
    payload: Buffer.alloc(0),
    ulaw: Buffer.alloc(0),
    codec: 'PCMU',
    sequenceNumber: 0,
    timestamp: 0,
    mediaTimeMs: 0,
    marker: false,
    receivedAt: 0,
  };

  constructor(
    public sink: RtpReceiverSink,
    private readonly recorder: WavRecorder | null,
  ) {}

  /** Payload types announced for telephone-event (ours and the far end's). */
  acceptEvents(payloadType: number): void {
    this.eventPayloadTypes[payloadType & 0x7f] = 1;
  }

  /** Handles one parsed RTP packet (`h` describes `msg`). */
  onPacket(msg: Buffer, h: RtpHeader, now: number): void {
    if (h.ssrc !== this.remoteSsrc) {
      if (this.remoteSsrc >= 0) this.stats = new ReceiveStatistics();
      this.remoteSsrc = h.ssrc;
      this.firstTimestamp = h.timestamp;
    }
    const pt = h.payloadType;
    const isEvent = this.eventPayloadTypes[pt] === 1;
    if (!isEvent && pt !== 0 && pt !== 8) {
      this.unknownPayloadType++;
      return;
    }
    // RFC 4733 events hold one timestamp for many packets: keep them out of jitter
    if (!this.stats.onPacket(h.sequenceNumber, now, isEvent ? undefined : h.timestamp)) return;
    this.lastPacketAt = now;
    if (isEvent) this.onEvent(msg, h);
    else this.onAudio(msg, h, pt === 8, now);
  }

  private onEvent(msg: Buffer, h: RtpHeader): void {
    const ev = parseTelephoneEvent(msg, h.payloadOffset, h.payloadLength);
    const fresh = ev && this.events.onPacket(h.timestamp, ev.event);
    const digit = fresh ? dtmfEventToDigit(fresh.event) : undefined;
    if (fresh && digit) this.sink.dtmf({ digit, event: fresh.event, timestamp: h.timestamp });
  }

  private onAudio(msg: Buffer, h: RtpHeader, pcma: boolean, now: number): void {
    const payload = msg.subarray(h.payloadOffset, h.payloadOffset + h.payloadLength);
    let ulaw = payload;
    if (pcma) {
      ulaw = Buffer.allocUnsafe(payload.length);
      transcode(ALAW_TO_ULAW, payload, ulaw);
    }
    if (this.recorder) this.recorder.far(payload, pcma ? ALAW_DECODE : ULAW_DECODE);
    const f = this.frame;
    f.payload = payload;
    f.ulaw = ulaw;
    f.codec = pcma ? 'PCMA' : 'PCMU';
    f.sequenceNumber = this.stats.lastExtendedSeq;
    f.timestamp = h.timestamp;
    f.mediaTimeMs = (((h.timestamp - this.firstTimestamp) >>> 0) / 8) | 0;
    f.marker = h.marker;
    f.receivedAt = now;
    this.sink.audio(f);
  }
}
