/**
 * Answering-machine detection on the callee's first seconds after answer.
 * Pure: driven by 20 ms frames of 16-bit PCM at 8 kHz, no timers, no I/O.
 *
 * Voice activity: frame energy (dBFS) against an adaptive noise floor that
 * falls fast and rises slowly. On top, the heuristics of Asterisk's
 * app_amd: silence before any speech (`initial_silence`), a greeting that
 * keeps talking (`long_greeting`), too many words (`max_words`), a short
 * utterance followed by silence (a human's "Hello?"), and an analysis limit
 * (`max_time`). Words are speech runs of at least minWordMs after a pause.
 *
 * Beep: a single steady tone in 400-2100 Hz, found with the Goertzel
 * algorithm on a 50 Hz grid refined ±25 Hz (worst case 12.5 Hz off a bin:
 * -0.9 dB at N = 160); a block is tonal when one frequency holds most of its
 * energy; a beep is a run of tonal blocks on one frequency (±50 Hz) lasting
 * beepMinMs to beepMaxMs. A sustained tone decides `machine` (`beep`); the
 * `beep` event comes when the tone ends: the time to leave a message.
 */

export interface VoicemailDetectorOptions {
  /** No speech at all for this long → `unknown` (`initial_silence`). Default 4000. */
  initialSilenceMs: number;
  /** One utterance (pauses < afterGreetingSilenceMs) this long → `machine`. Default 2500. */
  greetingMs: number;
  /** Silence that ends an utterance; after a short one → `human`. Default 800. */
  afterGreetingSilenceMs: number;
  /** Utterances shorter than this, then silence → `human`. Default 1500. */
  humanUtteranceMaxMs: number;
  /** Silence needed after an utterance between humanUtteranceMaxMs and greetingMs. Default 1200. */
  afterLongerUtteranceSilenceMs: number;
  /** Shortest speech run counted as a word, and the pause before it. Defaults 100, 60. */
  minWordMs: number;
  betweenWordsSilenceMs: number;
  /** This many words → `machine` (`max_words`). Default 6. */
  maxWords: number;
  /** No decision by then → `unknown` (`max_time`). Default 5000. */
  maxAnalysisMs: number;
  /** How long (from the first frame) to keep listening for a beep. Default 30000. */
  beepListenMs: number;
  /** Speech: this far above the noise floor, and above minSpeechDbfs. Defaults 10, -50. */
  speechAboveFloorDb: number;
  minSpeechDbfs: number;
  /** Beep band, Hz. Defaults 400 and 2100. */
  beepMinHz: number;
  beepMaxHz: number;
  /** Share (0-1) of a block's energy at one frequency for it to count as tonal. Default 0.7. */
  beepMinToneRatio: number;
  /** Beep length limits, ms. Defaults 150 and 3000. */
  beepMinMs: number;
  beepMaxMs: number;
}

export const DEFAULT_VOICEMAIL_DETECTOR_OPTIONS: VoicemailDetectorOptions = {
  initialSilenceMs: 4000,
  greetingMs: 2500,
  afterGreetingSilenceMs: 800,
  humanUtteranceMaxMs: 1500,
  afterLongerUtteranceSilenceMs: 1200,
  minWordMs: 100,
  betweenWordsSilenceMs: 60,
  maxWords: 6,
  maxAnalysisMs: 5000,
  beepListenMs: 30_000,
  speechAboveFloorDb: 10,
  minSpeechDbfs: -50,
  beepMinHz: 400,
  beepMaxHz: 2100,
  beepMinToneRatio: 0.7,
  beepMinMs: 150,
  beepMaxMs: 3000,
};

export type VoicemailResult = 'human' | 'machine' | 'unknown';
export type VoicemailReason =
  | 'initial_silence'
  | 'long_greeting'
  | 'max_words'
  | 'short_utterance'
  | 'utterance_then_silence'
  | 'beep'
  | 'max_time';

export interface VoicemailDecision {
  type: 'decision';
  result: VoicemailResult;
  reason: VoicemailReason;
  /** Audio time (ms from the first frame) at the decision. */
  afterMs: number;
  /** Words counted so far. */
  words: number;
  /** Length of the latest utterance, ms (0 if none). */
  utteranceMs: number;
}

export interface VoicemailBeep {
  type: 'beep';
  /** Audio time at the end of the tone: the time to start the message. */
  afterMs: number;
  frequencyHz: number;
  durationMs: number;
}

export type VoicemailEvent = VoicemailDecision | VoicemailBeep;

const SAMPLE_RATE = 8000;
const BLOCK = 160;
const BLOCK_MS = 20;
/** dB the floor may rise per block (2.5 dB/s); it falls 30% of the gap per block. */
const FLOOR_RISE_DB = 0.05;
const FLOOR_FALL = 0.3;

export class VoicemailDetector {
  private readonly o: VoicemailDetectorOptions;
  private readonly block = new Int16Array(BLOCK);
  private filled = 0;
  private elapsedMs = 0;
  private floorDb = Number.NaN;
  private result: VoicemailDecision | null = null;
  private beepFound = false;
  // Voice activity.
  private voiceRunMs = 0;
  private silenceRunMs = 0;
  private words = 0;
  private utteranceStartMs = -1;
  private utteranceEndMs = -1;
  private wordCounted = false;
  // Beep.
  private toneRunMs = 0;
  private toneHz = 0;

  constructor(options: Partial<VoicemailDetectorOptions> = {}) {
    this.o = { ...DEFAULT_VOICEMAIL_DETECTOR_OPTIONS, ...options };
  }

  /** The decision once made, else null. */
  get decision(): VoicemailDecision | null {
    return this.result;
  }

  /** Nothing more will come: decided, and a beep found or no longer awaited. */
  get done(): boolean {
    if (this.result === null) return false;
    return (
      this.result.result === 'human' || this.beepFound || this.elapsedMs >= this.o.beepListenMs
    );
  }

  /** Audio time consumed, ms. */
  get audioMs(): number {
    return this.elapsedMs;
  }

  /**
   * Feeds samples (normally one 20 ms frame of 160 samples; any length is
   * cut into 20 ms blocks). Returns what they decided, in order.
   */
  push(samples: Int16Array): VoicemailEvent[] {
    const events: VoicemailEvent[] = [];
    for (let i = 0; i < samples.length && !this.done; i += 1) {
      this.block[this.filled] = samples[i] ?? 0;
      this.filled += 1;
      if (this.filled === BLOCK) {
        this.filled = 0;
        this.analyse(events);
      }
    }
    return events;
  }

  private analyse(events: VoicemailEvent[]): void {
    const atMs = this.elapsedMs;
    this.elapsedMs += BLOCK_MS;
    let energy = 0;
    for (let i = 0; i < BLOCK; i += 1) energy += (this.block[i] ?? 0) ** 2;
    const db = 10 * Math.log10(energy / BLOCK / (32768 * 32768) + 1e-12);
    const speech = this.updateFloor(db);
    this.trackTone(energy, speech, atMs, events);
    if (this.result === null) this.trackVoice(speech, events);
  }

  /** Adaptive noise floor; true when the block is above it (speech or tone). */
  private updateFloor(db: number): boolean {
    if (Number.isNaN(this.floorDb)) this.floorDb = Math.min(db, -45);
    const speech = db > this.floorDb + this.o.speechAboveFloorDb && db > this.o.minSpeechDbfs;
    if (db < this.floorDb) this.floorDb += (db - this.floorDb) * FLOOR_FALL;
    else this.floorDb += Math.min(db - this.floorDb, FLOOR_RISE_DB);
    return speech;
  }

  private trackVoice(speech: boolean, events: VoicemailEvent[]): void {
    const o = this.o;
    const now = this.elapsedMs;
    if (speech) {
      // A new utterance starts after a pause that ended the last one.
      if (this.utteranceStartMs < 0 || this.silenceRunMs >= o.afterGreetingSilenceMs) {
        this.utteranceStartMs = now - BLOCK_MS;
      }
      this.silenceRunMs = 0;
      this.voiceRunMs += BLOCK_MS;
      if (!this.wordCounted && this.voiceRunMs >= o.minWordMs) {
        this.words += 1;
        this.wordCounted = true;
      }
      this.utteranceEndMs = now;
      if (now - this.utteranceStartMs >= o.greetingMs) {
        this.decide('machine', 'long_greeting', events);
      } else if (this.words >= o.maxWords) this.decide('machine', 'max_words', events);
      return;
    }
    this.silenceRunMs += BLOCK_MS;
    if (this.silenceRunMs >= o.betweenWordsSilenceMs) {
      this.voiceRunMs = 0;
      this.wordCounted = false;
    }
    if (this.utteranceStartMs < 0) {
      if (now >= o.initialSilenceMs) this.decide('unknown', 'initial_silence', events);
    } else if (this.words > 0) {
      const utteranceMs = this.utteranceEndMs - this.utteranceStartMs;
      if (utteranceMs < o.humanUtteranceMaxMs && this.silenceRunMs >= o.afterGreetingSilenceMs) {
        this.decide('human', 'short_utterance', events);
      } else if (this.silenceRunMs >= o.afterLongerUtteranceSilenceMs) {
        this.decide('human', 'utterance_then_silence', events);
      }
    }
    if (now >= o.maxAnalysisMs) this.decide('unknown', 'max_time', events);
  }

  private trackTone(energy: number, loud: boolean, atMs: number, events: VoicemailEvent[]): void {
    if (this.beepFound || this.elapsedMs > this.o.beepListenMs) return;
    const tone = loud ? this.strongestTone(energy) : null;
    const tonal = tone !== null && tone.ratio >= this.o.beepMinToneRatio;
    if (tonal && this.toneRunMs > 0 && Math.abs(tone.hz - this.toneHz) <= 50) {
      this.toneRunMs += BLOCK_MS;
      if (this.result === null && this.toneRunMs >= this.o.beepMinMs) {
        if (this.toneRunMs <= this.o.beepMaxMs) this.decide('machine', 'beep', events);
      }
      return;
    }
    if (this.toneRunMs >= this.o.beepMinMs && this.toneRunMs <= this.o.beepMaxMs) {
      this.beepFound = true;
      events.push({
        type: 'beep',
        afterMs: atMs,
        frequencyHz: this.toneHz,
        durationMs: this.toneRunMs,
      });
    }
    this.toneRunMs = tonal ? BLOCK_MS : 0;
    this.toneHz = tonal ? tone.hz : 0;
  }

  /** The strongest single frequency of the block and its share of the energy (0-1). */
  private strongestTone(energy: number): { hz: number; ratio: number } {
    let best = { hz: 0, ratio: 0 };
    for (let hz = this.o.beepMinHz; hz <= this.o.beepMaxHz; hz += 50) {
      const ratio = goertzelRatio(this.block, hz, energy);
      if (ratio > best.ratio) best = { hz, ratio };
    }
    for (const hz of [best.hz - 25, best.hz + 25]) {
      const ratio = goertzelRatio(this.block, hz, energy);
      if (ratio > best.ratio) best = { hz, ratio };
    }
    return best;
  }

  private decide(result: VoicemailResult, reason: VoicemailReason, events: VoicemailEvent[]): void {
    if (this.result !== null) return;
    this.result = {
      type: 'decision',
      result,
      reason,
      afterMs: this.elapsedMs,
      words: this.words,
      utteranceMs: this.utteranceStartMs < 0 ? 0 : this.utteranceEndMs - this.utteranceStartMs,
    };
    events.push(this.result);
  }
}

/** Goertzel power at `hz`, normalised so that a pure tone on `hz` gives 1. */
export function goertzelRatio(block: Int16Array, hz: number, energy: number): number {
  if (energy <= 0) return 0;
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / SAMPLE_RATE);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < block.length; i += 1) {
    const s = (block[i] ?? 0) + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return (2 * (s1 * s1 + s2 * s2 - coeff * s1 * s2)) / (block.length * energy);
}
