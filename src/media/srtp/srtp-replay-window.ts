/**
 * Replay list (RFC 3711 §3.3.2): the highest packet index accepted and a
 * bitmap of the 64 indices at and behind it (the RFC's minimum window,
 * SRTP-WINDOW-SIZE = 64). Works on 48-bit SRTP indices and 31-bit SRTCP
 * indices alike: both fit a double exactly.
 */
export type ReplayVerdict = 'ok' | 'replayed' | 'too_old';

/** Window size in packets. */
export const REPLAY_WINDOW_SIZE = 64;

/** A 64-packet sliding replay window over packet indices. */
export class ReplayWindow {
  /** Highest index accepted so far; -1 before the first. */
  highest = -1;
  /** Bit i set: index `highest - i` was accepted; bits 0–31 here, 32–63 in `hi`. */
  private lo = 0;
  private hi = 0;

  /** §3.3.2: may a packet with this index be processed? Changes nothing. */
  check(index: number): ReplayVerdict {
    if (this.highest < 0 || index > this.highest) return 'ok';
    const behind = this.highest - index;
    if (behind >= REPLAY_WINDOW_SIZE) return 'too_old';
    const bit = behind < 32 ? (this.lo >>> behind) & 1 : (this.hi >>> (behind - 32)) & 1;
    return bit === 1 ? 'replayed' : 'ok';
  }

  /** Records an authenticated index; call only after check() said 'ok'. */
  accept(index: number): void {
    if (this.highest < 0) {
      this.highest = index;
      this.lo = 1;
      this.hi = 0;
      return;
    }
    if (index > this.highest) {
      this.shift(index - this.highest);
      this.highest = index;
      this.lo = (this.lo | 1) >>> 0;
      return;
    }
    const behind = this.highest - index;
    if (behind < 32) this.lo = (this.lo | (1 << behind)) >>> 0;
    else if (behind < REPLAY_WINDOW_SIZE) this.hi = (this.hi | (1 << (behind - 32))) >>> 0;
  }

  private shift(by: number): void {
    if (by >= REPLAY_WINDOW_SIZE) {
      this.lo = 0;
      this.hi = 0;
    } else if (by >= 32) {
      this.hi = by === 32 ? this.lo : (this.lo << (by - 32)) >>> 0;
      this.lo = 0;
    } else {
      this.hi = ((this.hi << by) | (this.lo >>> (32 - by))) >>> 0;
      this.lo = (this.lo << by) >>> 0;
    }
  }
}
