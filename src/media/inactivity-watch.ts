/**
 * RTP inactivity (the call ends with `no_rtp_stream`): silence counts from
 * the later of the last packet and the last media change (a new address or
 * direction), and is reported once until packets resume. A timeout of 0
 * turns it off.
 */
export class InactivityWatch {
  private since: number;
  private reported = false;

  constructor(
    now: number,
    private readonly timeoutMs: number,
  ) {
    this.since = now;
  }

  /** The media changed: counting starts again from `now`. */
  reset(now: number): void {
    this.since = now;
    this.reported = false;
  }

  /**
   * How long it has been silent, the first time that reaches the timeout
   * while RTP is expected (sendrecv or recvonly); null otherwise.
   */
  check(now: number, lastPacketAt: number, expectRtp: boolean): number | null {
    const silentFor = now - Math.max(lastPacketAt, this.since);
    if (silentFor < this.timeoutMs) {
      this.reported = false; // packets resumed
      return null;
    }
    if (!expectRtp || this.timeoutMs <= 0 || this.reported) return null;
    this.reported = true;
    return silentFor;
  }
}
