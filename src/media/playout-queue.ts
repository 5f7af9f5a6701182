/**
 * Bounded queue of μ-law audio waiting to be sent, with marks: a mark is
 * reported once every byte queued before it has been taken for sending,
 * and `clear` drops the audio and the marks at once (Twilio Media Streams
 * `mark` / `clear` semantics). Chunks are kept as given, not copied.
 */
export interface ClearResult {
  /** Milliseconds of audio dropped (8 bytes per ms). */
  droppedMs: number;
  /** Marks that were waiting, in order; they will never be reported. */
  droppedMarks: string[];
}

interface Mark {
  name: string;
  /** Total enqueued bytes when the mark was set. */
  position: number;
}

const EMPTY = new Uint8Array(0);

export class PlayoutQueue {
  private chunks: Uint8Array[] = [];
  private head = 0; // index of the first chunk
  private headOffset = 0; // bytes of the first chunk already taken
  private queued = 0;
  private enqueuedTotal = 0;
  private takenTotal = 0;
  private marks: Mark[] = [];
  /** Bytes refused because the queue was full. */
  overflowBytes = 0;

  constructor(private readonly maxBytes: number) {}

  get queuedBytes(): number {
    return this.queued;
  }

  get pendingMarks(): number {
    return this.marks.length;
  }

  /** Queues μ-law audio; returns the bytes accepted (the tail beyond the bound is dropped). */
  push(ulaw: Uint8Array): number {
    const room = this.maxBytes - this.queued;
    const take = Math.min(room, ulaw.length);
    this.overflowBytes += ulaw.length - take;
    if (take <= 0) return 0;
    this.chunks.push(take === ulaw.length ? ulaw : ulaw.subarray(0, take));
    this.queued += take;
    this.enqueuedTotal += take;
    return take;
  }

  mark(name: string): void {
    this.marks.push({ name, position: this.enqueuedTotal });
  }

  /**
   * Copies up to `length` bytes of audio into `out` at `offset`, padding
   * with `silence` (unless it is null: the caller pads); returns the bytes
   * of real audio copied.
   */
  read(out: Uint8Array, offset: number, length: number, silence: number | null): number {
    let copied = 0;
    while (copied < length && this.queued > 0) {
      const chunk = this.chunks[this.head]!;
      const n = Math.min(length - copied, chunk.length - this.headOffset);
      if (n <= 320) {
        // a frame's worth: a plain loop beats allocating a view or a native call
        const from = this.headOffset;
        const to = offset + copied;
        for (let i = 0; i < n; i++) out[to + i] = chunk[from + i]!;
      } else {
        out.set(chunk.subarray(this.headOffset, this.headOffset + n), offset + copied);
      }
      copied += n;
      this.queued -= n;
      this.headOffset += n;
      if (this.headOffset === chunk.length) {
        // let go of it now: a taken chunk still referenced until the next
        // compaction lived long enough to be promoted (with the whole batch
        // buffer it is a view of), and old-generation garbage means full
        // collections in the media thread
        this.chunks[this.head++] = EMPTY;
        this.headOffset = 0;
      }
    }
    if (this.head > 64 && this.head * 2 > this.chunks.length) this.compact();
    if (copied < length && silence !== null) out.fill(silence, offset + copied, offset + length);
    this.takenTotal += copied;
    return copied;
  }

  /** Removes and returns the marks now played out (none when nothing is due). */
  takeDueMarks(): string[] | null {
    if (this.marks.length === 0 || this.marks[0]!.position > this.takenTotal) return null;
    const due: string[] = [];
    while (this.marks.length > 0 && this.marks[0]!.position <= this.takenTotal) {
      due.push(this.marks.shift()!.name);
    }
    return due;
  }

  clear(): ClearResult {
    const result: ClearResult = {
      droppedMs: this.queued / 8,
      droppedMarks: this.marks.map((m) => m.name),
    };
    this.chunks = [];
    this.head = 0;
    this.headOffset = 0;
    this.takenTotal += this.queued;
    this.queued = 0;
    this.marks = [];
    return result;
  }

  private compact(): void {
    this.chunks = this.chunks.slice(this.head);
    this.head = 0;
  }
}
