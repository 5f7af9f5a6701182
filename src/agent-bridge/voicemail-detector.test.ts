import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  goertzelRatio,
  VoicemailDetector,
  type VoicemailBeep,
  type VoicemailDecision,
  type VoicemailEvent,
} from './voicemail-detector.js';

const RATE = 8000;

/** Deterministic PRNG (mulberry32), so synthesized signals are the same every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Line noise at about -66 dBFS. */
function noise(ms: number, rand: () => number): Float64Array {
  const out = new Float64Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i += 1) out[i] = (rand() - 0.5) * 30;
  return out;
}

/**
 * A speech-like syllable: harmonics of a gliding pitch under two formant
 * bumps, plus breath noise, with a raised-cosine envelope (-20 dBFS peak).
 */
function syllable(ms: number, f0: number, formant: number, rand: () => number): Float64Array {
  const n = (ms * RATE) / 1000;
  const out = new Float64Array(n);
  let phase = 0;
  for (let i = 0; i < n; i += 1) {
    const t = i / n;
    const pitch = f0 * (1 + 0.08 * Math.sin(2 * Math.PI * t) - 0.05 * t);
    phase += (2 * Math.PI * pitch) / RATE;
    let v = 0;
    for (let h = 1; h * pitch < 3400; h += 1) {
      const f = h * pitch;
      const gain =
        Math.exp(-(((f - formant) / 250) ** 2)) + 0.5 * Math.exp(-(((f - 2300) / 400) ** 2));
      v += (gain * Math.sin(h * phase)) / Math.sqrt(h);
    }
    const envelope = 0.5 - 0.5 * Math.cos(2 * Math.PI * t);
    out[i] = envelope * (1800 * v + (rand() - 0.5) * 400);
  }
  return out;
}

function tone(ms: number, hz: number, amplitude = 8000): Float64Array {
  const out = new Float64Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i += 1)
    out[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / RATE);
  return out;
}

/** Words of 2-3 syllables, pauses of 80-180 ms between words and 350 ms between phrases. */
function speech(words: number, rand: () => number, phraseEvery = 4): Float64Array[] {
  const parts: Float64Array[] = [];
  for (let w = 0; w < words; w += 1) {
    const syllables = 2 + Math.floor(rand() * 2);
    for (let s = 0; s < syllables; s += 1) {
      parts.push(syllable(120 + rand() * 80, 110 + rand() * 60, 500 + rand() * 400, rand));
    }
    const pause = (w + 1) % phraseEvery === 0 ? 350 : 80 + rand() * 100;
    parts.push(noise(Math.round(pause / 20) * 20, rand));
  }
  return parts;
}

function join(parts: Float64Array[]): Int16Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Int16Array(total);
  let off = 0;
  for (const p of parts) {
    for (let i = 0; i < p.length; i += 1) {
      out[off + i] = Math.max(-32768, Math.min(32767, Math.round(p[i] ?? 0)));
    }
    off += p.length;
  }
  return out;
}

/** Feeds 20 ms frames, as the media layer delivers them; collects every event. */
function run(pcm: Int16Array, detector = new VoicemailDetector()): VoicemailEvent[] {
  const events: VoicemailEvent[] = [];
  for (let off = 0; off + 160 <= pcm.length && !detector.done; off += 160) {
    events.push(...detector.push(pcm.subarray(off, off + 160)));
  }
  return events;
}

const decisionOf = (events: VoicemailEvent[]): VoicemailDecision | undefined =>
  events.find((e): e is VoicemailDecision => e.type === 'decision');
const beepOf = (events: VoicemailEvent[]): VoicemailBeep | undefined =>
  events.find((e): e is VoicemailBeep => e.type === 'beep');

/** 8 kHz 16-bit mono PCM WAV → samples (the fixtures are written by sox). */
function readWav(name: string): Int16Array {
  const buf = readFileSync(new URL(`./testdata/${name}`, import.meta.url));
  expect(buf.toString('ascii', 0, 4)).toBe('RIFF');
  let off = 12;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    if (id === 'fmt ') {
      expect(buf.readUInt16LE(off + 8)).toBe(1); // PCM
      expect(buf.readUInt16LE(off + 10)).toBe(1); // mono
      expect(buf.readUInt32LE(off + 12)).toBe(RATE);
      expect(buf.readUInt16LE(off + 22)).toBe(16);
    }
    if (id === 'data') {
      const data = buf.subarray(off + 8, off + 8 + size);
      return new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
    }
    off += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

describe('VoicemailDetector on synthesized audio', () => {
  it('a 4.5 s greeting ending in a 1000 Hz beep → machine, then beep at its end', () => {
    const rand = rng(1);
    const greeting = speech(10, rand);
    const greetingMs = (greeting.reduce((n, p) => n + p.length, 0) / RATE) * 1000;
    const pcm = join([
      noise(400, rand),
      ...greeting,
      noise(300, rand),
      tone(500, 1000),
      noise(1000, rand),
    ]);
    const events = run(pcm);
    const decision = decisionOf(events)!;
    expect(decision).toMatchObject({ result: 'machine', reason: 'long_greeting' });
    expect(decision.afterMs).toBeLessThan(3200);
    const beep = beepOf(events)!;
    expect(beep.frequencyHz).toBeGreaterThanOrEqual(975);
    expect(beep.frequencyHz).toBeLessThanOrEqual(1025);
    expect(beep.durationMs).toBeGreaterThanOrEqual(480);
    expect(beep.durationMs).toBeLessThanOrEqual(520);
    const beepEndMs = 400 + greetingMs + 300 + 500;
    expect(Math.abs(beep.afterMs - beepEndMs)).toBeLessThanOrEqual(40);
    expect(greetingMs).toBeGreaterThan(4000);
  });

  it('a short "hello?" (0.6 s) then silence → human', () => {
    const rand = rng(2);
    const hello = [syllable(250, 180, 700, rand), noise(60, rand), syllable(290, 220, 600, rand)];
    const events = run(join([noise(300, rand), ...hello, noise(3000, rand)]));
    expect(decisionOf(events)).toMatchObject({ result: 'human', reason: 'short_utterance' });
    expect(decisionOf(events)!.afterMs).toBeLessThan(2000);
    expect(beepOf(events)).toBeUndefined();
  });

  it('silence → unknown once initialSilenceMs has passed', () => {
    const events = run(join([noise(8000, rng(3))]));
    expect(events).toEqual([
      {
        type: 'decision',
        result: 'unknown',
        reason: 'initial_silence',
        afterMs: 4000,
        words: 0,
        utteranceMs: 0,
      },
    ]);
  });

  it('a bare beep (no greeting) → machine by beep', () => {
    const rand = rng(4);
    const events = run(join([noise(1000, rand), tone(400, 1400, 5000), noise(1000, rand)]));
    expect(decisionOf(events)).toMatchObject({ result: 'machine', reason: 'beep' });
    expect(beepOf(events)).toMatchObject({ frequencyHz: 1400, durationMs: 400 });
  });

  it('finds beeps across the band, between bins too', () => {
    for (const hz of [425, 850, 1337, 2000, 2080]) {
      const rand = rng(hz);
      const events = run(join([noise(200, rand), tone(300, hz, 3000), noise(200, rand)]));
      const beep = beepOf(events);
      expect(beep, `${hz} Hz`).toBeDefined();
      expect(Math.abs(beep!.frequencyHz - hz)).toBeLessThanOrEqual(25);
    }
  });

  it('ignores a tone shorter than 150 ms, a dual tone (440+480 ringback) and one too long', () => {
    const rand = rng(5);
    const dual = tone(1000, 440, 4000).map(
      (v, i) => v + 4000 * Math.sin((2 * Math.PI * 480 * i) / RATE),
    );
    const pcm = join([
      noise(200, rand),
      tone(100, 1000),
      noise(300, rand),
      dual,
      noise(300, rand),
      tone(3500, 700),
      noise(300, rand),
    ]);
    expect(
      beepOf(run(pcm, new VoicemailDetector({ maxAnalysisMs: 60_000, initialSilenceMs: 60_000 }))),
    ).toBeUndefined();
  });

  it('keeps speech harmonics from passing as a beep', () => {
    const rand = rng(6);
    const pcm = join([...speech(30, rand, 3), noise(2000, rand)]);
    expect(
      beepOf(
        run(
          pcm,
          new VoicemailDetector({ greetingMs: 60_000, maxWords: 1000, maxAnalysisMs: 60_000 }),
        ),
      ),
    ).toBeUndefined();
  });

  it('counts words from speech runs', () => {
    const rand = rng(7);
    const d = new VoicemailDetector({ greetingMs: 60_000, maxAnalysisMs: 60_000, maxWords: 100 });
    const words = [0, 1, 2, 3, 4].flatMap(() => [syllable(200, 150, 600, rand), noise(200, rand)]);
    const events = run(join([...words, noise(2000, rand)]), d);
    expect(decisionOf(events)).toMatchObject({
      result: 'human',
      reason: 'utterance_then_silence',
      words: 5,
    });
  });

  it('accepts frames of any length, and is done after a human decision', () => {
    const rand = rng(8);
    const pcm = join([syllable(400, 160, 600, rand), noise(2000, rand)]);
    const d = new VoicemailDetector();
    const events: VoicemailEvent[] = [];
    for (let off = 0; off < pcm.length; off += 37)
      events.push(...d.push(pcm.subarray(off, off + 37)));
    expect(decisionOf(events)).toMatchObject({ result: 'human' });
    expect(d.done).toBe(true);
    expect(d.push(new Int16Array(160))).toEqual([]);
  });

  it('goertzelRatio is 1 for a pure on-bin tone and ~0 far from it', () => {
    const block = Int16Array.from(tone(20, 1000));
    let energy = 0;
    for (const v of block) energy += v * v;
    expect(goertzelRatio(block, 1000, energy)).toBeCloseTo(1, 1);
    expect(goertzelRatio(block, 1500, energy)).toBeLessThan(0.01);
  });
});

describe('VoicemailDetector on espeak-ng recordings (src/agent-bridge/testdata)', () => {
  it('machine greeting ending in a 1000 Hz beep → machine, then beep', () => {
    const events = run(readWav('vmd-machine-greeting-beep-1000hz.wav'));
    expect(decisionOf(events)).toMatchObject({ result: 'machine' });
    expect(beepOf(events)).toMatchObject({ frequencyHz: 1000 });
    console.log('vmd fixture machine:', JSON.stringify(events));
  });

  it('"Hello?" → human', () => {
    const events = run(readWav('vmd-human-hello.wav'));
    expect(decisionOf(events)).toMatchObject({ result: 'human' });
    console.log('vmd fixture hello:', JSON.stringify(events));
  });

  it('"Hello, this is Anna." → human', () => {
    const events = run(readWav('vmd-human-hello-this-is-anna.wav'));
    expect(decisionOf(events)).toMatchObject({ result: 'human' });
    console.log('vmd fixture anna:', JSON.stringify(events));
  });
});
