import { describe, expect, it } from 'vitest';
import { Resampler } from './resampler.js';

function tone(freq: number, rate: number, seconds: number, amplitude = 10_000): Int16Array {
  const out = new Int16Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * i) / rate));
  }
  return out;
}

function rms(x: Int16Array, skip: number): number {
  let s = 0;
  for (let i = skip; i < x.length - skip; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / (x.length - 2 * skip));
}

/** Power at one frequency (Goertzel), as an RMS-equivalent amplitude. */
function goertzel(x: Int16Array, freq: number, rate: number, skip: number): number {
  const w = (2 * Math.PI * freq) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  const n = x.length - 2 * skip;
  for (let i = skip; i < x.length - skip; i++) {
    const s0 = x[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return Math.sqrt((2 * power) / (n * n));
}

/** Feeds the signal in 20 ms chunks, as a call does. */
function resampleInChunks(r: Resampler, input: Int16Array): Int16Array {
  const chunk = r.fromRate / 50;
  const parts: Int16Array[] = [];
  for (let i = 0; i < input.length; i += chunk) parts.push(r.process(input.subarray(i, i + chunk)));
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const dB = (ratio: number): number => 20 * Math.log10(ratio);

describe('Resampler', () => {
  it.each([
    [16_000, 8_000],
    [24_000, 8_000],
    [8_000, 16_000],
    [8_000, 24_000],
    [24_000, 16_000],
  ])('%i → %i Hz: a 1 kHz tone survives within 0.5 dB', (from, to) => {
    const input = tone(1000, from, 1);
    const out = resampleInChunks(new Resampler(from, to), input);
    expect(Math.abs(out.length - (input.length * to) / from)).toBeLessThanOrEqual(1);
    const ratio = rms(out, to / 20) / rms(input, from / 20);
    expect(Math.abs(dB(ratio))).toBeLessThan(0.5);
    expect(Math.abs(dB(goertzel(out, 1000, to, to / 20) / rms(input, 0)))).toBeLessThan(0.5);
  });

  it.each([
    [16_000, 8_000, 5_000],
    [16_000, 8_000, 6_500],
    [24_000, 8_000, 4_500],
    [24_000, 8_000, 9_000],
  ])('%i → %i Hz: a %i Hz tone above the new Nyquist is attenuated ≥ 50 dB', (from, to, f) => {
    const input = tone(f, from, 1);
    const out = resampleInChunks(new Resampler(from, to), input);
    expect(dB(rms(out, to / 20) / rms(input, from / 20))).toBeLessThan(-50);
  });

  it('8 → 16 kHz: the image of a 1 kHz tone at 7 kHz is attenuated ≥ 50 dB', () => {
    const out = resampleInChunks(new Resampler(8_000, 16_000), tone(1000, 8_000, 1));
    const signal = goertzel(out, 1000, 16_000, 800);
    expect(dB(goertzel(out, 7000, 16_000, 800) / signal)).toBeLessThan(-50);
  });

  it('gives the same output in 20 ms chunks as in one piece', () => {
    const input = tone(440, 24_000, 0.2);
    const whole = new Resampler(24_000, 8_000).process(input);
    const chunked = resampleInChunks(new Resampler(24_000, 8_000), input);
    expect(Array.from(chunked)).toEqual(Array.from(whole));
  });

  it('is not sample dropping: decimating an alternating signal gives silence', () => {
    const nyquistTone = new Int16Array(1600).map((_, i) => (i % 2 === 0 ? 8000 : -8000));
    const out = new Resampler(16_000, 8_000).process(nyquistTone);
    expect(rms(out, 100)).toBeLessThan(10);
  });
});
