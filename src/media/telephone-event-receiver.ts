/**
 * Folds a stream of RFC 4733 packets into one report per event: all the
 * packets of an event share its RTP timestamp (§2.5.1.1), so a new
 * (timestamp, event) pair starts a new event and everything else (the
 * updates, duplicates, the three end packets) belongs to one already
 * reported. A few recent events are remembered so a late duplicate of an
 * older one is not reported again.
 */
export interface ReceivedTelephoneEvent {
  event: number;
  /** RTP timestamp of the event's start. */
  timestamp: number;
}

const REMEMBERED = 8;

export class TelephoneEventReceiver {
  private readonly timestamps = new Float64Array(REMEMBERED).fill(-1);
  private readonly events = new Int16Array(REMEMBERED).fill(-1);
  private next = 0;

  /** Returns the event when this packet starts a new one, otherwise null. */
  onPacket(timestamp: number, event: number): ReceivedTelephoneEvent | null {
    for (let i = 0; i < REMEMBERED; i++) {
      if (this.timestamps[i] === timestamp && this.events[i] === event) return null;
    }
    this.timestamps[this.next] = timestamp;
    this.events[this.next] = event;
    this.next = (this.next + 1) % REMEMBERED;
    return { event, timestamp };
  }
}
