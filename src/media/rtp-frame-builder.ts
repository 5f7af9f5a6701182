import { transcode, ULAW_SILENCE, ULAW_TO_ALAW } from './g711.js';
import type { PlayoutQueue } from './playout-queue.js';
import { RTP_HEADER_SIZE, writeRtpHeader } from './rtp-packet.js';
import { writeTelephoneEvent } from './telephone-event.js';
import type { TelephoneEventSender } from './telephone-event-sender.js';

/**
 * Builds the packet a session sends for one frame, without I/O: RFC 4733
 * event packets while a digit is being sent, otherwise 20 ms of queued
 * agent audio or silence, so sequence numbers and timestamps stay
 * continuous (RFC 3550 §5.1: random initial values, +1 per packet,
 * +160 per frame, marker on the first packet of a talk-spurt). Buffers
 * come from small rings, since a send may read its buffer after this tick.
 */
export const FRAME_SAMPLES = 160; // 20 ms at 8 kHz
const RING = 4;

export interface BuiltFrame {
  packet: Buffer;
  /** Real agent audio bytes in it (0 for silence and events). */
  audioBytes: number;
  isEvent: boolean;
}

export class RtpFrameBuilder {
  sequenceNumber: number;
  private readonly audio: Buffer[] = [];
  private readonly events: Buffer[] = [];
  /** Whether a ring buffer's payload is μ-law silence already (no need to fill it again). */
  private readonly silent: boolean[] = [];
  private next = 0;
  private talking = false;
  private readonly built: BuiltFrame = { packet: Buffer.alloc(0), audioBytes: 0, isEvent: false };

  constructor(
    readonly ssrc: number,
    initialSequence: number,
    private readonly queue: PlayoutQueue,
    private readonly dtmf: TelephoneEventSender,
  ) {
    this.sequenceNumber = initialSequence;
    // one allocation for the whole ring: the per-frame path touches one region
    const audioSize = RTP_HEADER_SIZE + FRAME_SAMPLES;
    const eventSize = RTP_HEADER_SIZE + 4;
    const slab = Buffer.alloc(RING * (audioSize + eventSize));
    for (let i = 0; i < RING; i++) {
      this.audio.push(slab.subarray(i * audioSize, (i + 1) * audioSize));
      const e = RING * audioSize + i * eventSize;
      this.events.push(slab.subarray(e, e + eventSize));
      this.silent.push(false);
    }
  }

  /**
   * The frame at media timestamp `timestamp`. `payloadType` and `alaw` are
   * the negotiated codec; `eventPayloadType` null when events were not agreed.
   * The returned object is reused by the next call.
   */
  build(
    timestamp: number,
    payloadType: number,
    alaw: boolean,
    eventPayloadType: number | null,
  ): BuiltFrame {
    const slot = this.next;
    this.next = (slot + 1) % RING;
    const out = this.built;
    if (eventPayloadType !== null && this.dtmf.busy) {
      const ev = this.dtmf.nextFrame(timestamp);
      if (ev) {
        const buf = this.events[slot]!;
        writeRtpHeader(
          buf,
          0,
          ev.marker,
          eventPayloadType,
          this.sequenceNumber,
          ev.timestamp,
          this.ssrc,
        );
        writeTelephoneEvent(buf, RTP_HEADER_SIZE, ev);
        this.sequenceNumber = (this.sequenceNumber + 1) & 0xffff;
        this.talking = false;
        out.packet = buf;
        out.audioBytes = 0;
        out.isEvent = true;
        return out;
      }
    }
    const buf = this.audio[slot]!;
    const got = this.queue.read(buf, RTP_HEADER_SIZE, FRAME_SAMPLES, null);
    if (got < FRAME_SAMPLES && !(got === 0 && this.silent[slot])) {
      buf.fill(ULAW_SILENCE, RTP_HEADER_SIZE + got);
    }
    this.silent[slot] = got === 0 && !alaw; // A-law is transcoded in place below
    const marker = got > 0 && !this.talking;
    this.talking = got > 0;
    if (alaw) transcode(ULAW_TO_ALAW, buf.subarray(RTP_HEADER_SIZE), buf, RTP_HEADER_SIZE);
    writeRtpHeader(buf, 0, marker, payloadType, this.sequenceNumber, timestamp, this.ssrc);
    this.sequenceNumber = (this.sequenceNumber + 1) & 0xffff;
    out.packet = buf;
    out.audioBytes = got;
    out.isEvent = false;
    return out;
  }

  /**
   * A frame's worth of time passing without a packet (on hold): queued
   * audio and digits are consumed, the sequence number does not move.
   */
  skip(timestamp: number): void {
    this.talking = false;
    if (this.dtmf.busy && this.dtmf.nextFrame(timestamp)) return;
    if (this.queue.read(this.audio[this.next]!, RTP_HEADER_SIZE, FRAME_SAMPLES, null) > 0) {
      this.silent[this.next] = false;
    }
  }
}
