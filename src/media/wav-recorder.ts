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

export class WavRecorder {
  readonly fileId: string;
  readonly path: string;
  private file: Promise<FileHandle>;
  private writes: Promise<unknown> = Promise.resolve();
  private readonly farFifo: Int16Array;
  private farStart = 0;
  private farLength = 0;
  private block: Buffer;
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
    this.block = Buffer.alloc(frameSamples * 4 * FLUSH_FRAMES);
    this.file = open(this.path, 'w');
    this.file.catch((err: unknown) => (this.failed = err));
  }

  /** Queues received far-end samples. */
  far(samples: Int16Array): void {
    const cap = this.farFifo.length;
    for (let i = 0; i < samples.length; i++) {
      if (this.farLength === cap) {
        this.farStart = (this.farStart + 1) % cap; // drop the oldest
        this.farLength--;
      }
      this.farFifo[(this.farStart + this.farLength) % cap] = samples[i]!;
      this.farLength++;
    }
  }

  /** Writes one frame: `near` on the right, the oldest queued far-end audio on the left. */
  near(samples: Int16Array): void {
    const cap = this.farFifo.length;
    const block = this.block;
    let o = this.blockOffset;
    for (let i = 0; i < this.frameSamples; i++) {
      let left = 0;
      if (this.farLength > 0) {
        left = this.farFifo[this.farStart]!;
        this.farStart = (this.farStart + 1) % cap;
        this.farLength--;
      }
      block.writeInt16LE(left, o);
      block.writeInt16LE(samples[i] ?? 0, o + 2);
      o += 4;
    }
    this.blockOffset = o;
    if (o === block.length) this.flush();
  }

  private flush(): void {
    if (this.blockOffset === 0) return;
    const data = this.block.subarray(0, this.blockOffset);
    const position = HEADER_SIZE + this.dataBytes;
    this.dataBytes += data.length;
    this.block = Buffer.alloc(this.block.length);
    this.blockOffset = 0;
    this.writes = this.writes
      .then(() => this.file)
      .then((fh) => fh.write(data, 0, data.length, position))
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
