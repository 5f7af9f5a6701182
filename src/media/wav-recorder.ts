import { randomUUID } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Records a call to a stereo 16-bit WAV file: left the far end (what we
 * received), right the near end (what we sent). The session drives it at
 * the frame rate: `far` queues received audio as it arrives, `near` writes
 * one frame of each channel, so both stay aligned on our send clock (the
 * far end gets silence while it sends nothing, and a backlog beyond one
 * second is dropped). Data is written in one-second blocks off the hot path.
 */
export interface RecordingResult {
  fileId: string;
  path: string;
  durationMs: number;
  bytes: number;
}

const HEADER_SIZE = 44;
const FLUSH_FRAMES = 50;
/** WAV samples are little-endian; the block is filled in host order and swapped on the rare big-endian host. */
const HOST_IS_LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class WavRecorder {
  readonly fileId: string;
  readonly path: string;
  private file: Promise<FileHandle>;
  private writes: Promise<unknown> = Promise.resolve();
  private readonly farFifo: Int16Array;
  private farStart = 0;
  private farLength = 0;
  /** Interleaved left/right samples of the block being filled. */
  private block: Int16Array;
  /** Blocks whose write has finished, for reuse (no allocation per second of audio). */
  private readonly spare: Int16Array[] = [];
  private blockOffset = 0;
  private dataBytes = 0;
  private failed: unknown = null;

  constructor(
    directory: string,
    private readonly sampleRate = 8000,
    private readonly frameSamples = 160,
  ) {
    this.fileId = randomUUID();
    this.path = join(directory, `${this.fileId}.wav`);
    this.farFifo = new Int16Array(sampleRate);
    this.block = new Int16Array(frameSamples * 2 * FLUSH_FRAMES);
    this.file = open(this.path, 'w');
    this.file.catch((err: unknown) => (this.failed = err));
  }

  /**
   * Queues received far-end audio: G.711 `codes` decoded with `decode`
   * (ULAW_DECODE or ALAW_DECODE), straight into the queue (no per-packet array).
   */
  far(codes: Uint8Array, decode: Int16Array): void {
    const fifo = this.farFifo;
    const cap = fifo.length;
    for (let i = 0; i < codes.length; i++) {
      if (this.farLength === cap) {
        if (++this.farStart === cap) this.farStart = 0; // drop the oldest
        this.farLength--;
      }
      let at = this.farStart + this.farLength;
      if (at >= cap) at -= cap;
      fifo[at] = decode[codes[i]!]!;
      this.farLength++;
    }
  }

  /**
   * Writes one frame: the sent G.711 `codes` (decoded with `decode`) on the
   * right, the oldest queued far-end audio on the left.
   */
  near(codes: Uint8Array, decode: Int16Array): void {
    const fifo = this.farFifo;
    const cap = fifo.length;
    const block = this.block;
    let o = this.blockOffset;
    for (let i = 0; i < this.frameSamples; i++) {
      let left = 0;
      if (this.farLength > 0) {
        left = fifo[this.farStart]!;
        if (++this.farStart === cap) this.farStart = 0;
        this.farLength--;
      }
      block[o] = left;
      block[o + 1] = i < codes.length ? decode[codes[i]!]! : 0;
      o += 2;
    }
    this.blockOffset = o;
    if (o === block.length) this.flush();
  }

  private flush(): void {
    if (this.blockOffset === 0) return;
    const block = this.block;
    const data = Buffer.from(block.buffer, 0, this.blockOffset * 2);
    if (!HOST_IS_LE) data.swap16();
    const position = HEADER_SIZE + this.dataBytes;
    this.dataBytes += data.length;
    this.block = this.spare.pop() ?? new Int16Array(block.length);
    this.blockOffset = 0;
    this.writes = this.writes
      .then(() => this.file)
      .then((fh) => fh.write(data, 0, data.length, position))
      .then(() => this.spare.push(block))
      .catch((err: unknown) => (this.failed = err));
  }

  /** Flushes, writes the RIFF header with the final sizes and closes the file. */
  async close(): Promise<RecordingResult> {
    this.flush();
    await this.writes;
    const fh = await this.file;
    try {
      if (this.failed) throw this.failed;
      await fh.write(this.header(), 0, HEADER_SIZE, 0);
    } finally {
      await fh.close();
    }
    return {
      fileId: this.fileId,
      path: this.path,
      durationMs: (this.dataBytes / 4 / this.sampleRate) * 1000,
      bytes: HEADER_SIZE + this.dataBytes,
    };
  }

  private header(): Buffer {
    const h = Buffer.alloc(HEADER_SIZE);
    h.write('RIFF', 0, 'ascii');
    h.writeUInt32LE(36 + this.dataBytes, 4);
    h.write('WAVE', 8, 'ascii');
    h.write('fmt ', 12, 'ascii');
    h.writeUInt32LE(16, 16); // PCM fmt chunk size
    h.writeUInt16LE(1, 20); // PCM
    h.writeUInt16LE(2, 22); // stereo
    h.writeUInt32LE(this.sampleRate, 24);
    h.writeUInt32LE(this.sampleRate * 4, 28); // byte rate
    h.writeUInt16LE(4, 32); // block align
    h.writeUInt16LE(16, 34); // bits per sample
    h.write('data', 36, 'ascii');
    h.writeUInt32LE(this.dataBytes, 40);
    return h;
  }
}
