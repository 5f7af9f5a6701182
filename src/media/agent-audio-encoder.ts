import { encodeUlaw } from './g711.js';
import { MediaError } from './media-error.js';
import { Resampler } from './resampler.js';

/**
 * Turns agent audio into the μ-law 8 kHz the playout queue holds: μ-law
 * bytes pass through untouched, 16-bit PCM at 8, 16 or 24 kHz is
 * resampled (one streaming resampler per input rate) and encoded.
 */
export class AgentAudioEncoder {
  private readonly resamplers = new Map<number, Resampler>();

  toUlaw(audio: Uint8Array | Int16Array, sampleRate: number): Uint8Array {
    if (!(audio instanceof Int16Array)) return audio;
    let pcm = audio;
    if (sampleRate !== 8000) {
      let rs = this.resamplers.get(sampleRate);
      if (!rs) {
        if (sampleRate !== 16000 && sampleRate !== 24000) {
          throw new MediaError('unsupported_audio_format', `PCM at ${sampleRate} Hz`);
        }
        rs = new Resampler(sampleRate, 8000);
        this.resamplers.set(sampleRate, rs);
      }
      pcm = rs.process(audio);
    }
    const ulaw = Buffer.allocUnsafe(pcm.length);
    encodeUlaw(pcm, ulaw);
    return ulaw;
  }
}
