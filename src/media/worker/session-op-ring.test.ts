import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  OP_KINDS,
  OpRingReader,
  OpRingWriter,
  createOpRing,
  type OpKind,
} from './session-op-ring.js';

interface Written {
  id: number;
  kind: OpKind;
  at: number;
  payload: number[];
}

const drainAll = (reader: OpRingReader): Written[] => {
  const out: Written[] = [];
  reader.drain((r) => out.push({ id: r.id, kind: r.kind, at: r.at, payload: [...r.payload] }));
  return out;
};

describe('the session operation ring', () => {
  it('hands over records byte for byte and in order; a string is its UTF-8', () => {
    const buffers = createOpRing(1024);
    const writer = new OpRingWriter(buffers);
    const reader = new OpRingReader(buffers);
    expect(writer.write(7, 'enqueue', new Uint8Array([1, 2, 3]), 12.5)).toBe(true);
    expect(writer.write(7, 'mark', 'spoken·1')).toBe(true);
    expect(writer.write(9, 'clear', new Uint8Array(0))).toBe(true);
    const got: { id: number; kind: string; at: number; text: string }[] = [];
    expect(
      reader.drain((r) =>
        got.push({ id: r.id, kind: r.kind, at: r.at, text: Buffer.from(r.payload).toString() }),
      ),
    ).toBe(3);
    expect(got).toEqual([
      { id: 7, kind: 'enqueue', at: 12.5, text: '\x01\x02\x03' },
      { id: 7, kind: 'mark', at: 0, text: 'spoken·1' },
      { id: 9, kind: 'clear', at: 0, text: '' },
    ]);
    expect(writer.used).toBe(0);
    expect(reader.drain(() => expect.unreachable())).toBe(0);
  });

  it('a drain called from inside a record reads nothing; the outer one goes on, each record once', () => {
    const buffers = createOpRing(256);
    const writer = new OpRingWriter(buffers);
    const reader = new OpRingReader(buffers);
    for (const id of [1, 2, 3]) writer.write(id, 'clear', '');
    const seen: number[] = [];
    const inner: number[] = [];
    reader.drain((r) => {
      seen.push(r.id);
      inner.push(reader.drain(() => seen.push(-1)));
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(inner).toEqual([0, 0, 0]);
    expect(writer.used).toBe(0);
  });

  it('refuses a record that does not fit until the reader has read', () => {
    const buffers = createOpRing(64);
    const writer = new OpRingWriter(buffers);
    const reader = new OpRingReader(buffers);
    expect(writer.write(1, 'enqueue', new Uint8Array(20))).toBe(true); // 40 bytes
    expect(writer.write(2, 'enqueue', new Uint8Array(20))).toBe(false);
    expect(drainAll(reader).map((r) => r.id)).toEqual([1]);
    // 24 bytes left at the end: the record wraps behind a PAD
    expect(writer.write(2, 'enqueue', new Uint8Array(20))).toBe(true);
    expect(drainAll(reader).map((r) => [r.id, r.payload.length])).toEqual([[2, 20]]);
    expect(() => createOpRing(100)).toThrow(RangeError);
  });

  it('any interleaving of writes and drains: what was accepted comes out once, in order, intact; a refusal only when full', () => {
    const op = fc.oneof(
      fc.record({
        write: fc.constant(true as const),
        id: fc.integer({ min: 0, max: 0xfffffffe }),
        kind: fc.constantFrom(...OP_KINDS),
        at: fc.double({ noNaN: true }),
        payload: fc.uint8Array({ maxLength: 90 }),
      }),
      fc.record({ write: fc.constant(false as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const capacity = 256;
        const buffers = createOpRing(capacity);
        const writer = new OpRingWriter(buffers);
        const reader = new OpRingReader(buffers);
        const pending: Written[] = [];
        for (const o of ops) {
          if (o.write) {
            const size = 20 + ((o.payload.length + 3) & ~3);
            const usedBefore = writer.used;
            const ok = writer.write(o.id, o.kind, o.payload, o.at);
            // it may refuse only when the record (and, at worst, a PAD before it) could not fit
            if (!ok) expect(usedBefore + 2 * size).toBeGreaterThan(capacity);
            if (ok) pending.push({ id: o.id, kind: o.kind, at: o.at, payload: [...o.payload] });
          } else {
            expect(drainAll(reader)).toEqual(pending.splice(0));
            expect(writer.used).toBe(0);
          }
        }
        expect(drainAll(reader)).toEqual(pending);
      }),
    );
  });
});
