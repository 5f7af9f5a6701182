// Loudness of a recorded WAV, for "did the peer hear the tone" checks.
import { readFileSync } from 'node:fs';

/** RMS of a 16-bit PCM WAV's samples (after a 44-byte header). */
export function wavRms(path: string): number {
  const b = readFileSync(path);
  let sum = 0;
  const n = Math.floor((b.length - 44) / 2);
  for (let i = 0; i < n; i++) sum += b.readInt16LE(44 + 2 * i) ** 2;
  return n ? Math.sqrt(sum / n) : 0;
}
