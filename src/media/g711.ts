/**
 * G.711 μ-law and A-law (ITU-T G.711), table driven. The tables are built
 * once from the ITU-T G.191 reference algorithm (one's complement for
 * negative inputs), so encoding and decoding are single lookups.
 * Linear samples are 16-bit; μ-law uses the top 14 bits, A-law the top 13.
 */

function ulawCompressReference(lin: number): number {
  // G.191 ulaw_compress: bias 33, segment from the position of the leading one
  let absno = lin < 0 ? (~lin >> 2) + 33 : (lin >> 2) + 33;
  if (absno > 0x1fff) absno = 0x1fff;
  let i = absno >> 6;
  let segno = 1;
  while (i !== 0) {
    segno++;
    i >>= 1;
  }
  const high = 0x08 - segno;
  const low = 0x0f - ((absno >> segno) & 0x0f);
  const code = (high << 4) | low;
  return lin >= 0 ? code | 0x80 : code;
}

function ulawExpandReference(code: number): number {
  // G.191 ulaw_expand
  const sign = code < 0x80 ? -1 : 1;
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const step = 4 << (exponent + 1);
  return sign * ((0x80 << exponent) + step * mantissa + step / 2 - 4 * 33);
}

function alawCompressReference(lin: number): number {
  // G.191 alaw_compress: segments 0 and 1 share the step, even bits inverted
  let ix = lin < 0 ? ~lin >> 4 : lin >> 4;
  if (ix > 15) {
    let exp = 1;
    while (ix > 16 + 15) {
      ix >>= 1;
      exp++;
    }
    ix -= 16;
    ix += exp << 4;
  }
  if (lin >= 0) ix |= 0x80;
  return ix ^ 0x55;
}

function alawExpandReference(code: number): number {
  // G.191 alaw_expand
  const ix = (code ^ 0x55) & 0x7f;
  const exp = ix >> 4;
  let mant = ix & 0x0f;
  if (exp > 0) mant += 16;
  mant = (mant << 4) + 0x08;
  if (exp > 1) mant <<= exp - 1;
  return code > 127 ? mant : -mant;
}

/** μ-law code → 16-bit linear. */
export const ULAW_DECODE = new Int16Array(256);
/** A-law code → 16-bit linear. */
export const ALAW_DECODE = new Int16Array(256);
/** 14-bit linear (two's complement, as `(sample >> 2) & 0x3fff`) → μ-law. */
const ULAW_ENCODE = new Uint8Array(1 << 14);
/** 13-bit linear (`(sample >> 3) & 0x1fff`) → A-law. */
const ALAW_ENCODE = new Uint8Array(1 << 13);
/** Transcoding tables through linear (G.711 Appendix-free, via decode then encode). */
export const ALAW_TO_ULAW = new Uint8Array(256);
export const ULAW_TO_ALAW = new Uint8Array(256);

for (let c = 0; c < 256; c++) {
  ULAW_DECODE[c] = ulawExpandReference(c);
  ALAW_DECODE[c] = alawExpandReference(c);
}
for (let i = 0; i < 1 << 14; i++) ULAW_ENCODE[i] = ulawCompressReference((i << 18) >> 16);
for (let i = 0; i < 1 << 13; i++) ALAW_ENCODE[i] = alawCompressReference((i << 19) >> 16);
for (let c = 0; c < 256; c++) {
  ALAW_TO_ULAW[c] = ULAW_ENCODE[(ALAW_DECODE[c]! >> 2) & 0x3fff]!;
  ULAW_TO_ALAW[c] = ALAW_ENCODE[(ULAW_DECODE[c]! >> 3) & 0x1fff]!;
}

/** μ-law code of silence (linear 0), and A-law's. */
export const ULAW_SILENCE = 0xff;
export const ALAW_SILENCE = 0xd5;

export function encodeUlawSample(sample: number): number {
  return ULAW_ENCODE[(sample >> 2) & 0x3fff]!;
}

export function encodeAlawSample(sample: number): number {
  return ALAW_ENCODE[(sample >> 3) & 0x1fff]!;
}

/** Encodes 16-bit linear PCM to μ-law into `out` (same length). */
export function encodeUlaw(pcm: Int16Array, out: Uint8Array, outOffset = 0): void {
  for (let i = 0; i < pcm.length; i++) out[outOffset + i] = ULAW_ENCODE[(pcm[i]! >> 2) & 0x3fff]!;
}

export function encodeAlaw(pcm: Int16Array, out: Uint8Array, outOffset = 0): void {
  for (let i = 0; i < pcm.length; i++) out[outOffset + i] = ALAW_ENCODE[(pcm[i]! >> 3) & 0x1fff]!;
}

export function decodeUlaw(codes: Uint8Array, out: Int16Array, outOffset = 0): void {
  for (let i = 0; i < codes.length; i++) out[outOffset + i] = ULAW_DECODE[codes[i]!]!;
}

export function decodeAlaw(codes: Uint8Array, out: Int16Array, outOffset = 0): void {
  for (let i = 0; i < codes.length; i++) out[outOffset + i] = ALAW_DECODE[codes[i]!]!;
}

/** Maps every byte of `src` through a 256-entry table (A-law ↔ μ-law). */
export function transcode(
  table: Uint8Array,
  src: Uint8Array,
  out: Uint8Array,
  outOffset = 0,
): void {
  for (let i = 0; i < src.length; i++) out[outOffset + i] = table[src[i]!]!;
}
