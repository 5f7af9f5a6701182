import type { ReportBlock } from './rtcp-report-block.js';

/**
 * Reception statistics for one source, as RFC 3550 appendix A prescribes:
 * A.1 sequence number bookkeeping (extended to 32 bits across wrap-around,
 * resynchronised after a large jump), A.3 expected and lost packets, A.8
 * interarrival jitter. Duplicates are recognised in a 128-packet window and
 * not counted as received, so `packetsLost` does not go negative on them.
 */
const RTP_SEQ_MOD = 1 << 16;
const MAX_DROPOUT = 3000; // A.1
const MAX_MISORDER = 100; // A.1
const WINDOW = 128;

export interface ReceiveCounters {
  packetsReceived: number;
  packetsLost: number;
  lossPct: number;
  packetsOutOfOrder: number;
  packetsDuplicated: number;
  jitterMs: number;
  expected: number;
}

export class ReceiveStatistics {
  private started = false;
  private maxSeq = 0;
  private cycles = 0;
  private baseSeq = 0;
  private badSeq = RTP_SEQ_MOD + 1;
  private received = 0;
  private outOfOrder = 0;
  private duplicates = 0;
  private expectedPrior = 0;
  private receivedPrior = 0;
  private transit = 0;
  private haveTransit = false;
  /** Jitter in timestamp units (A.8 keeps it as a float, reports it rounded). */
  private jitter = 0;
  private readonly seen = new Float64Array(WINDOW).fill(-1);
  /** Extended sequence number of the packet last accepted by `onPacket`. */
  lastExtendedSeq = 0;

  /** `clockRate` is the RTP timestamp rate (8000 for G.711). */
  constructor(private readonly clockRate = 8000) {}

  /**
   * Accounts one packet; returns false for a duplicate or a packet outside
   * the acceptable window (A.1), which callers should drop.
   * `arrivalMs` is the local clock; `timestamp` is omitted for packets that
   * must not feed jitter (RFC 4733 events hold one timestamp for many packets).
   */
  onPacket(seq: number, arrivalMs: number, timestamp?: number): boolean {
    if (!this.started) {
      this.started = true;
      this.initSeq(seq);
    } else {
      const udelta = (seq - this.maxSeq) & 0xffff;
      if (udelta === 0) {
        this.duplicates++;
        return false;
      }
      if (udelta < MAX_DROPOUT) {
        // in order, with permissible gap
        if (seq < this.maxSeq) this.cycles += RTP_SEQ_MOD; // wrapped
        this.maxSeq = seq;
      } else if (udelta <= RTP_SEQ_MOD - MAX_MISORDER) {
        // the sequence number made a very large jump
        if (seq === this.badSeq) {
          // two sequential packets: the source restarted; resync (A.1)
          this.initSeq(seq);
        } else {
          this.badSeq = (seq + 1) & 0xffff;
          return false;
        }
      } else {
        // duplicate or reordered packet, behind the highest seen
        const ext = this.extendedOf(seq);
        if (ext < this.baseSeq || this.seen[ext % WINDOW] === ext) {
          this.duplicates++;
          return false;
        }
        this.outOfOrder++;
        this.markSeen(ext);
        this.lastExtendedSeq = ext;
        this.received++;
        this.updateJitter(arrivalMs, timestamp);
        return true;
      }
    }
    this.markSeen(this.cycles + this.maxSeq);
    this.lastExtendedSeq = this.cycles + this.maxSeq;
    this.received++;
    this.updateJitter(arrivalMs, timestamp);
    return true;
  }

  private initSeq(seq: number): void {
    this.baseSeq = seq;
    this.maxSeq = seq;
    this.badSeq = RTP_SEQ_MOD + 1;
    this.cycles = 0;
    this.received = 0;
    this.receivedPrior = 0;
    this.expectedPrior = 0;
    this.seen.fill(-1);
  }

  /** Extended sequence number of a packet behind the highest one. */
  private extendedOf(seq: number): number {
    const back = (this.maxSeq - seq) & 0xffff;
    return this.cycles + this.maxSeq - back;
  }

  private markSeen(ext: number): void {
    this.seen[ext % WINDOW] = ext;
  }

  private updateJitter(arrivalMs: number, timestamp: number | undefined): void {
    if (timestamp === undefined) return;
    // A.8: transit in timestamp units; J += (|D| − J) / 16
    const arrival = (arrivalMs * this.clockRate) / 1000;
    const transit = arrival - timestamp;
    if (this.haveTransit) {
      let d = transit - this.transit;
      // timestamps wrap at 2^32: fold the difference into range
      if (d > 2 ** 31) d -= 2 ** 32;
      else if (d < -(2 ** 31)) d += 2 ** 32;
      this.jitter += (Math.abs(d) - this.jitter) / 16;
    }
    this.transit = transit;
    this.haveTransit = true;
  }

  get extendedHighestSeq(): number {
    return this.cycles + this.maxSeq;
  }

  counters(): ReceiveCounters {
    const expected = this.started ? this.extendedHighestSeq - this.baseSeq + 1 : 0; // A.3
    const lost = expected - this.received;
    return {
      packetsReceived: this.received,
      packetsLost: Math.max(0, lost),
      lossPct: expected > 0 ? (Math.max(0, lost) / expected) * 100 : 0,
      packetsOutOfOrder: this.outOfOrder,
      packetsDuplicated: this.duplicates,
      jitterMs: (this.jitter * 1000) / this.clockRate,
      expected,
    };
  }

  /** A report block for RTCP (A.3 interval loss), or null before the first packet. */
  reportBlock(ssrc: number, lastSr: number, delaySinceLastSr: number): ReportBlock | null {
    if (!this.started) return null;
    const expected = this.extendedHighestSeq - this.baseSeq + 1;
    const expectedInterval = expected - this.expectedPrior;
    const receivedInterval = this.received - this.receivedPrior;
    this.expectedPrior = expected;
    this.receivedPrior = this.received;
    const lostInterval = expectedInterval - receivedInterval;
    const fraction =
      expectedInterval === 0 || lostInterval <= 0
        ? 0
        : Math.min(255, Math.floor((lostInterval << 8) / expectedInterval));
    return {
      ssrc,
      fractionLost: fraction,
      cumulativeLost: expected - this.received,
      extendedHighestSeq: this.extendedHighestSeq >>> 0,
      jitter: Math.round(this.jitter) >>> 0,
      lastSr,
      delaySinceLastSr,
    };
  }
}
