import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ALAW_DECODE, ULAW_DECODE, encodeAlawSample, encodeUlawSample } from './g711.js';
import { WavRecorder } from './wav-recorder.js';

describe('WavRecorder', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes a stereo 8 kHz WAV: far end left, near end right, aligned per frame', async () => {
    dir = await mkdtemp(join(tmpdir(), 'wav-'));
    const rec = new WavRecorder(dir);
    // far end in μ-law, near end in A-law: each decoded with its own table
    const far = new Uint8Array(160).fill(encodeUlawSample(1000));
    const near = new Uint8Array(160).fill(encodeAlawSample(-2000));
    const farValue = ULAW_DECODE[far[0]!]!;
    const nearValue = ALAW_DECODE[near[0]!]!;
    expect(farValue).toBeGreaterThan(900); // G.711 keeps the level, within its step
    expect(nearValue).toBeLessThan(-1900);
    for (let i = 0; i < 120; i++) {
      if (i % 2 === 0) rec.far(far, ULAW_DECODE); // far end sends only every other frame
      rec.near(near, ALAW_DECODE);
    }
    const result = await rec.close();
    expect(result.fileId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.durationMs).toBe(2400);
    const wav = await readFile(result.path);
    expect(wav.length).toBe(44 + 120 * 160 * 4);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.readUInt16LE(22)).toBe(2);
    expect(wav.readUInt32LE(24)).toBe(8000);
    expect(wav.readUInt32LE(40)).toBe(120 * 160 * 4);
    expect(wav.readInt16LE(44)).toBe(farValue);
    expect(wav.readInt16LE(46)).toBe(nearValue);
    expect(wav.readInt16LE(44 + 160 * 4)).toBe(0); // far end silent in frame 1
    expect(wav.readInt16LE(44 + 2 * 160 * 4)).toBe(farValue);
    expect(wav.readInt16LE(44 + 119 * 160 * 4 + 2)).toBe(nearValue); // the last block too
  });
});
