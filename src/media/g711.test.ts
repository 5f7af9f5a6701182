import { describe, expect, it } from 'vitest';
import {
  ALAW_DECODE,
  ALAW_TO_ULAW,
  encodeAlawSample,
  encodeUlawSample,
  ULAW_DECODE,
  ULAW_TO_ALAW,
} from './g711.js';

/*
 * ITU-T G.711 Table 2 (μ-law), positive half, in the table's units (full
 * scale 8159 = 16-bit 32636 / 4). Per segment: the first decision value,
 * the code of the interval it opens, the reconstructed value at the first
 * and the last interval of the segment.
 */
const MU_LAW_SEGMENTS: [decision: number, firstCode: number, firstOut: number, lastOut: number][] =
  [
    [0, 0xff, 0, 30],
    [31, 0xef, 33, 93],
    [95, 0xdf, 99, 219],
    [223, 0xcf, 231, 471],
    [479, 0xbf, 495, 975],
    [991, 0xaf, 1023, 1983],
    [2015, 0x9f, 2079, 3999],
    [4063, 0x8f, 4191, 8031],
  ];

/*
 * ITU-T G.711 Table 1 (A-law), positive half, in the table's units (full
 * scale 4096 = 16-bit 32768 / 8). Segments 0 and 1 share a step of 2.
 */
const A_LAW_SEGMENTS: [decision: number, firstCode: number, firstOut: number, lastOut: number][] = [
  [0, 0xd5, 1, 31],
  [32, 0xc5, 33, 63],
  [64, 0xf5, 66, 126],
  [128, 0xe5, 132, 252],
  [256, 0x95, 264, 504],
  [512, 0x85, 528, 1008],
  [1024, 0xb5, 1056, 2016],
  [2048, 0xa5, 2112, 4032],
];

describe('G.711 μ-law', () => {
  it.each(MU_LAW_SEGMENTS)(
    'segment at %i: code %s, outputs %i…%i',
    (decision, code, firstOut, lastOut) => {
      expect(encodeUlawSample(decision * 4)).toBe(code);
      if (decision > 0) expect(encodeUlawSample((decision - 1) * 4)).toBe(code + 1); // previous segment's last
      expect(ULAW_DECODE[code]).toBe(firstOut * 4);
      expect(ULAW_DECODE[code - 15]).toBe(lastOut * 4);
      expect(ULAW_DECODE[code & 0x7f]).toBe(-firstOut * 4 || 0); // sign bit clear: negative
    },
  );

  it("codes zero, the first steps, negatives (one's complement) and clipping", () => {
    expect(encodeUlawSample(0)).toBe(0xff);
    expect(encodeUlawSample(4)).toBe(0xfe); // decision value 1
    expect(encodeUlawSample(3 * 4)).toBe(0xfd);
    expect(encodeUlawSample(-1)).toBe(0x7f);
    expect(encodeUlawSample(-8)).toBe(0x7e);
    expect(encodeUlawSample(32767)).toBe(0x80);
    expect(encodeUlawSample(-32768)).toBe(0x00);
    expect(ULAW_DECODE[0x80]).toBe(32124);
    expect(ULAW_DECODE[0x00]).toBe(-32124);
    expect(ULAW_DECODE[0x7f]).toBe(0);
  });

  it('decode then encode is the identity on every code but negative zero', () => {
    for (let c = 0; c < 256; c++) {
      if (c === 0x7f) continue; // −0 decodes to 0, which encodes as +0
      expect(encodeUlawSample(ULAW_DECODE[c]!)).toBe(c);
    }
  });
});

describe('G.711 A-law', () => {
  it.each(A_LAW_SEGMENTS)(
    'segment at %i: code %s, outputs %i…%i',
    (decision, code, firstOut, lastOut) => {
      expect(encodeAlawSample(decision * 8)).toBe(code);
      expect(ALAW_DECODE[code]).toBe(firstOut * 8);
      expect(ALAW_DECODE[(((code ^ 0x55) | 0x0f) ^ 0x55) & 0xff]).toBe(lastOut * 8);
      expect(ALAW_DECODE[code & 0x7f]).toBe(-firstOut * 8);
    },
  );

  it('codes the extremes and negative zero', () => {
    expect(encodeAlawSample(0)).toBe(0xd5);
    expect(encodeAlawSample(-1)).toBe(0x55);
    expect(encodeAlawSample(32767)).toBe(0xaa);
    expect(encodeAlawSample(-32768)).toBe(0x2a);
    expect(ALAW_DECODE[0xaa]).toBe(32256);
    expect(ALAW_DECODE[0x2a]).toBe(-32256);
  });

  it('decode then encode is the identity on every code', () => {
    for (let c = 0; c < 256; c++) expect(encodeAlawSample(ALAW_DECODE[c]!)).toBe(c);
  });
});

describe('A-law ↔ μ-law transcoding', () => {
  it('keeps silence near zero and the error within one step of the coarser law', () => {
    expect(ULAW_DECODE[ALAW_TO_ULAW[0xd5]!]).toBe(8); // A-law has no zero: ±8 is its smallest
    expect(ULAW_TO_ALAW[0xff]).toBe(0xd5);
    for (let c = 0; c < 256; c++) {
      const a = ALAW_DECODE[c]!;
      const u = ULAW_DECODE[ALAW_TO_ULAW[c]!]!;
      expect(Math.abs(a - u)).toBeLessThanOrEqual(Math.max(16, Math.abs(a) / 16));
    }
  });
});
