/**
 * The main thread's session operations for the media worker, in shared
 * memory: a single-producer, single-consumer ring of records
 * (docs/benchmarks.md, "a 2 ms window for agent audio"). The main thread
 * writes agent audio, marks, clears, digits and SDP in order; the worker
 * reads them before each pacing tick, and at once when woken for an
 * operation other than audio. Agent audio thus reaches the worker with no
 * message and no wake-up of its thread per frame, and no later than its
 * session's next tick needs it.
 *
 * Layout: `control` holds two Int32 counters, bytes written and bytes read
 * (free-running, modulo 2^32); `data` holds the records, each starting on a
 * 4-byte boundary and never wrapping (a PAD id fills the end instead):
 *   u32 session id, u16 kind, u16 0, u32 payload length, f64 at (ms,
 *   performance.now(): the threads share the process's time origin), then
 *   the payload. The writer publishes a record with Atomics.store on the
 *   write counter after writing its bytes; the reader reads up to the
 *   counter it loaded, then releases the space with Atomics.store on the read
 *   counter (the Atomics are the happens-before edges, ECMA-262 §29).
 */

/** What a record asks of the session. */
export const OP_KINDS = ['enqueue', 'mark', 'clear', 'dtmf', 'answer', 'offer'] as const;
export type OpKind = (typeof OP_KINDS)[number];

const HEADER = 4 + 2 + 2 + 4 + 8;
const PAD = 0xffffffff;
const WRITTEN = 0;
const READ = 1;

export interface OpRingBuffers {
  data: SharedArrayBuffer;
  control: SharedArrayBuffer;
}

/** One record as read: `payload` views the ring, valid only inside the callback. */
export interface OpRecord {
  id: number;
  kind: OpKind;
  at: number;
  payload: Uint8Array;
}

/** The shared buffers of a ring of `capacity` bytes (a power of two, at least 64). */
export function createOpRing(capacity: number): OpRingBuffers {
  if (capacity < 64 || (capacity & (capacity - 1)) !== 0) {
    throw new RangeError(`ring capacity ${capacity} is not a power of two ≥ 64`);
  }
  return { data: new SharedArrayBuffer(capacity), control: new SharedArrayBuffer(8) };
}

const align4 = (n: number): number => (n + 3) & ~3;

abstract class RingSide {
  protected readonly counters: Int32Array;
  protected readonly bytes: Uint8Array;
  protected readonly view: DataView;
  protected readonly mask: number;

  constructor(buffers: OpRingBuffers) {
    this.counters = new Int32Array(buffers.control);
    this.bytes = new Uint8Array(buffers.data);
    this.view = new DataView(buffers.data);
    this.mask = buffers.data.byteLength - 1;
  }

  protected load(which: number): number {
    return Atomics.load(this.counters, which) >>> 0;
  }
}

/** The main thread's side. */
export class OpRingWriter extends RingSide {
  private readonly encoder = new TextEncoder();

  /** Bytes written and not yet read. */
  get used(): number {
    return (this.load(WRITTEN) - this.load(READ)) >>> 0;
  }

  /** Appends one record; false (nothing written) when it does not fit now. */
  write(id: number, kind: OpKind, payload: Uint8Array | string, at = 0): boolean {
    const body = typeof payload === 'string' ? this.encoder.encode(payload) : payload;
    const size = HEADER + align4(body.length);
    const capacity = this.mask + 1;
    let written = this.load(WRITTEN);
    const free = capacity - ((written - this.load(READ)) >>> 0);
    let pos = written & this.mask;
    const tail = capacity - pos;
    if (size > capacity || free < size + (size > tail ? tail : 0)) return false;
    if (size > tail) {
      // the record would wrap: fill the end with a PAD id and start at 0
      this.view.setUint32(pos, PAD, true);
      written = (written + tail) >>> 0;
      pos = 0;
    }
    this.view.setUint32(pos, id, true);
    this.view.setUint16(pos + 4, OP_KINDS.indexOf(kind), true);
    this.view.setUint16(pos + 6, 0, true);
    this.view.setUint32(pos + 8, body.length, true);
    this.view.setFloat64(pos + 12, at, true);
    this.bytes.set(body, pos + HEADER);
    Atomics.store(this.counters, WRITTEN, (written + size) | 0);
    return true;
  }
}

/** The worker's side. */
export class OpRingReader extends RingSide {
  private draining = false;

  /**
   * Calls `each` for every record written so far, in order; returns how
   * many. A call from inside `each` reads nothing (0): the outer one goes on.
   */
  drain(each: (r: OpRecord) => void): number {
    if (this.draining) return 0;
    this.draining = true;
    const written = this.load(WRITTEN);
    let read = this.load(READ);
    let count = 0;
    try {
      while (read !== written) {
        const pos = read & this.mask;
        const id = this.view.getUint32(pos, true);
        if (id === PAD) {
          read = (read + (this.mask + 1 - pos)) >>> 0;
          continue;
        }
        const length = this.view.getUint32(pos + 8, true);
        const record: OpRecord = {
          id,
          kind: OP_KINDS[this.view.getUint16(pos + 4, true)]!,
          at: this.view.getFloat64(pos + 12, true),
          payload: this.bytes.subarray(pos + HEADER, pos + HEADER + length),
        };
        read = (read + HEADER + align4(length)) >>> 0;
        count++;
        each(record);
      }
    } finally {
      Atomics.store(this.counters, READ, read | 0);
      this.draining = false;
    }
    return count;
  }
}
