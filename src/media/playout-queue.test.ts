import { describe, expect, it } from 'vitest';
import { PlayoutQueue } from './playout-queue.js';

const bytes = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v);

describe('PlayoutQueue', () => {
  it('hands out 160-byte frames across chunk boundaries and pads with silence', () => {
    const q = new PlayoutQueue(8000);
    q.push(bytes(100, 1));
    q.push(bytes(100, 2));
    const out = new Uint8Array(172);
    expect(q.read(out, 12, 160, 0xff)).toBe(160);
    expect(out.subarray(12, 112).every((b) => b === 1)).toBe(true);
    expect(out.subarray(112, 172).every((b) => b === 2)).toBe(true);
    expect(q.read(out, 12, 160, 0xff)).toBe(40);
    expect(out.subarray(52, 172).every((b) => b === 0xff)).toBe(true);
    expect(q.read(out, 12, 160, 0xff)).toBe(0);
  });

  it('reports a mark once the audio queued before it is taken', () => {
    const q = new PlayoutQueue(8000);
    const out = new Uint8Array(160);
    q.mark('empty'); // nothing before it: due at the next frame
    q.push(bytes(320, 1));
    q.mark('two-frames');
    q.push(bytes(160, 1));
    expect(q.takeDueMarks()).toEqual(['empty']);
    q.read(out, 0, 160, 0xff);
    expect(q.takeDueMarks()).toBeNull();
    q.read(out, 0, 160, 0xff);
    expect(q.takeDueMarks()).toEqual(['two-frames']);
    expect(q.pendingMarks).toBe(0);
  });

  it('clear drops the audio at once and returns the marks it dropped', () => {
    const q = new PlayoutQueue(80_000);
    q.push(bytes(8000, 1));
    q.mark('a');
    q.push(bytes(800, 1));
    q.mark('b');
    expect(q.clear()).toEqual({ droppedMs: 1100, droppedMarks: ['a', 'b'] });
    expect(q.queuedBytes).toBe(0);
    q.mark('c');
    expect(q.takeDueMarks()).toEqual(['c']);
  });

  it('is bounded: the tail beyond the limit is refused and counted', () => {
    const q = new PlayoutQueue(400);
    expect(q.push(bytes(300, 1))).toBe(300);
    expect(q.push(bytes(300, 1))).toBe(100);
    expect(q.push(bytes(10, 1))).toBe(0);
    expect(q.overflowBytes).toBe(210);
    expect(q.queuedBytes).toBe(400);
  });

  it('lets go of a chunk as soon as it has been taken (no reference left until compaction)', () => {
    const q = new PlayoutQueue(8000);
    const first = bytes(160, 1);
    const second = bytes(160, 2);
    q.push(first);
    q.push(second);
    q.read(new Uint8Array(160), 0, 160, 0xff);
    const held = (q as unknown as { chunks: Uint8Array[] }).chunks;
    expect(held).not.toContain(first); // a taken view (and the buffer behind it) can be collected young
    expect(held).toContain(second);
  });

  it('keeps memory flat over a long stream of small chunks', () => {
    const q = new PlayoutQueue(1_000_000);
    const out = new Uint8Array(160);
    for (let i = 0; i < 10_000; i++) {
      q.push(bytes(80, 1));
      q.push(bytes(80, 1));
      q.read(out, 0, 160, 0xff);
    }
    expect(q.queuedBytes).toBe(0);
    expect((q as unknown as { chunks: unknown[] }).chunks.length).toBeLessThan(200);
  });
});
