import { MediaError } from './media-error.js';
import { dtmfDigitToEvent, type TelephoneEvent } from './telephone-event.js';

/**
 * Turns queued DTMF digits into one RFC 4733 packet per 20 ms frame
 * (§2.5.1): the first packet of an event carries the marker bit, every
 * packet carries the event's start timestamp and the duration so far, the
 * last one the E bit and is sent three times in all (§2.5.1.4). Digits are
 * separated by `gapFrames` frames of ordinary audio.
 */
export interface TelephoneEventFrame extends TelephoneEvent {
  marker: boolean;
  /** RTP timestamp of the event's first frame. */
  timestamp: number;
}

const END_PACKETS = 3;

export class TelephoneEventSender {
  private readonly pending: number[] = [];
  private current = -1;
  private startTimestamp = 0;
  /** Packets sent for the current event, end retransmissions included. */
  private sent = 0;
  private gapLeft = 0;

  constructor(
    private readonly durationFrames: number,
    private readonly gapFrames: number,
    private readonly samplesPerFrame: number,
    private readonly volume = 10,
  ) {}

  /** Queues digits; throws RangeError on anything outside 0-9 * # A-D. */
  enqueue(digits: string): void {
    const events: number[] = [];
    for (const d of digits) {
      const ev = dtmfDigitToEvent(d);
      if (ev === undefined) throw new RangeError(`not a DTMF digit: ${JSON.stringify(d)}`);
      events.push(ev);
    }
    this.pending.push(...events);
  }

  get busy(): boolean {
    return this.current >= 0 || this.pending.length > 0;
  }

  /** Drops queued digits (an event under way still ends properly). */
  cancel(): void {
    this.pending.length = 0;
  }

  /**
   * The event packet for the frame whose audio timestamp is `timestamp`,
   * or null when this frame carries audio (idle, or the gap between digits).
   */
  nextFrame(timestamp: number): TelephoneEventFrame | null {
    if (this.current < 0) {
      if (this.gapLeft > 0) {
        this.gapLeft--;
        return null;
      }
      const next = this.pending.shift();
      if (next === undefined) return null;
      this.current = next;
      this.startTimestamp = timestamp;
      this.sent = 0;
    }
    this.sent++;
    const frames = Math.min(this.sent, this.durationFrames);
    const frame: TelephoneEventFrame = {
      event: this.current,
      end: this.sent >= this.durationFrames,
      volume: this.volume,
      duration: Math.min(0xffff, frames * this.samplesPerFrame),
      marker: this.sent === 1,
      timestamp: this.startTimestamp,
    };
    if (this.sent >= this.durationFrames + END_PACKETS - 1) {
      this.current = -1;
      this.gapLeft = this.gapFrames;
    }
    return frame;
  }
}

/**
 * Whether a session may send `digits` as RFC 4733 events: the far end must
 * have accepted telephone-event, and every digit must be one (0-9 * # A-D).
 * Throws the MediaError a caller of `sendDtmf` gets.
 */
export function checkDtmfRequest(telephoneEventPayloadType: number | null, digits: string): void {
  if (telephoneEventPayloadType === null) {
    throw new MediaError('dtmf_not_negotiated', 'the far end did not accept telephone-event');
  }
  for (const d of digits) {
    if (dtmfDigitToEvent(d) === undefined) {
      throw new MediaError('invalid_dtmf_digit', 'not a DTMF digit', {
        cause: new RangeError(`not a DTMF digit: ${JSON.stringify(d)}`),
      });
    }
  }
}
