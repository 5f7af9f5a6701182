// Audio format conversion between the call (μ-law 8 kHz RTP) and the agent's
// WebSocket format (μ-law as is, or 16-bit PCM at 8, 16 or 24 kHz).
import type { AgentAudioFormat } from '../agent/index.js';
import { sampleRateOf } from '../agent/index.js';
import { Resampler, decodeUlaw } from '../media/index.js';

/** Callee → agent: one 20 ms μ-law frame in, the agent's bytes out. */
export class CalleeAudioConverter {
  private readonly resampler: Resampler | undefined;

  constructor(private readonly format: AgentAudioFormat) {
    const rate = sampleRateOf(format);
    this.resampler = rate === 8000 ? undefined : new Resampler(8000, rate);
  }

  /** μ-law decoded to 16-bit PCM at 8 kHz (fresh array). */
  static pcm8k(ulaw: Uint8Array): Int16Array {
    const pcm = new Int16Array(ulaw.length);
    decodeUlaw(ulaw, pcm);
    return pcm;
  }

  /**
   * The frame in the agent's format. `pcm` is the frame already decoded,
   * when the caller has it (voicemail detection decodes it too).
   */
  toAgent(ulaw: Buffer, pcm?: Int16Array): Buffer | Int16Array {
    if (this.format === 'mulaw_8000') return ulaw;
    const at8k = pcm ?? CalleeAudioConverter.pcm8k(ulaw);
    return this.resampler ? this.resampler.process(at8k) : at8k;
  }
}

/** Agent → call: the agent's payload as MediaLeg.enqueue takes it (PCM frames come even-sized). */
export class AgentAudioReader {
  private readonly rate: number;

  constructor(private readonly format: AgentAudioFormat) {
    this.rate = sampleRateOf(format);
  }

  toMedia(payload: Buffer): { audio: Uint8Array | Int16Array; sampleRate: number } | undefined {
    if (this.format === 'mulaw_8000') return { audio: payload, sampleRate: 8000 };
    if (payload.length < 2) return undefined;
    // s16le on the wire (little-endian hosts); Int16Array needs an even offset, so copy when odd.
    const aligned = payload.byteOffset % 2 === 0 ? payload : Buffer.from(payload);
    const pcm = new Int16Array(aligned.buffer, aligned.byteOffset, aligned.length >> 1);
    return { audio: pcm, sampleRate: this.rate };
  }
}
