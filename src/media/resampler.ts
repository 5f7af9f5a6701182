/**
 * Streaming rational resampler for 16-bit PCM (8, 16, 24 kHz and any
 * rational pair): upsample by L, low-pass with a Kaiser-windowed sinc,
 * downsample by M, computed polyphase (only the taps that meet non-zero
 * inputs). The filter cuts below the lower Nyquist so that nothing above
 * the new band aliases down; state carries across calls, so 20 ms chunks
 * resample exactly as one long signal would.
 */
export interface ResamplerOptions {
  /** Stopband attenuation in dB (default 70). */
  attenuationDb?: number;
  /** Passband edge as a fraction of the lower Nyquist frequency (default 0.85). */
  passband?: number;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Zeroth-order modified Bessel function of the first kind (series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

export class Resampler {
  readonly fromRate: number;
  readonly toRate: number;
  private readonly up: number;
  private readonly down: number;
  /** Prototype filter at fromRate × up, gain `up` (compensates zero stuffing). */
  private readonly taps: Float64Array;
  /** Recent inputs, newest last; `history.length` = taps needed per output. */
  private readonly history: Float64Array;
  private historyLength: number;
  /** Absolute index of the next input sample, and of the next output sample. */
  private inputIndex = 0;
  private outputIndex = 0;

  constructor(fromRate: number, toRate: number, options: ResamplerOptions = {}) {
    if (!(fromRate > 0 && toRate > 0) || !Number.isInteger(fromRate + toRate)) {
      throw new RangeError(`unsupported rates ${fromRate} → ${toRate}`);
    }
    this.fromRate = fromRate;
    this.toRate = toRate;
    const g = gcd(fromRate, toRate);
    this.up = toRate / g;
    this.down = fromRate / g;
    const attenuation = options.attenuationDb ?? 70;
    const workRate = fromRate * this.up;
    const nyquist = Math.min(fromRate, toRate) / 2;
    const passEdge = nyquist * (options.passband ?? 0.85);
    const transition = (nyquist - passEdge) / workRate; // cycles per sample
    const cutoff = (passEdge + nyquist) / 2 / workRate;
    // Kaiser's formulas for β and the length that reach `attenuation`
    const beta =
      attenuation > 50
        ? 0.1102 * (attenuation - 8.7)
        : 0.5842 * (attenuation - 21) ** 0.4 + 0.07886 * (attenuation - 21);
    let n = Math.ceil((attenuation - 8) / (2.285 * 2 * Math.PI * transition)) + 1;
    if (n % 2 === 0) n++;
    this.taps = new Float64Array(n);
    const mid = (n - 1) / 2;
    const i0Beta = besselI0(beta);
    for (let i = 0; i < n; i++) {
      const t = i - mid;
      const sinc = t === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * t) / (Math.PI * t);
      const w = besselI0(beta * Math.sqrt(1 - (t / mid) ** 2)) / i0Beta;
      this.taps[i] = sinc * w * this.up;
    }
    this.history = new Float64Array(Math.ceil(n / this.up) + 1);
    this.historyLength = this.history.length;
  }

  /** Output samples that `inputSamples` more inputs will produce (±1). */
  outputLengthFor(inputSamples: number): number {
    return Math.ceil((inputSamples * this.up) / this.down) + 1;
  }

  /** Resamples one chunk; returns the output samples it completes. */
  process(input: Int16Array): Int16Array {
    const hist = this.history;
    const histLen = this.historyLength;
    const work = new Float64Array(histLen + input.length);
    work.set(hist.subarray(0, histLen));
    for (let i = 0; i < input.length; i++) work[histLen + i] = input[i]!;
    const workBase = this.inputIndex - histLen; // absolute index of work[0]
    const endInput = this.inputIndex + input.length;
    const out = new Int16Array(this.outputLengthFor(input.length) + 1);
    const taps = this.taps;
    const nTaps = taps.length;
    const up = this.up;
    let produced = 0;
    for (;;) {
      const pos = this.outputIndex * this.down; // position in the upsampled stream
      const newest = Math.floor(pos / up);
      if (newest >= endInput) break;
      // y[n] = Σ h[pos − i·L] · x[i] for inputs i whose upsampled index is within the filter
      let acc = 0;
      for (let i = newest, k = pos - newest * up; k < nTaps; i--, k += up) {
        const j = i - workBase;
        if (j < 0) break;
        acc += taps[k]! * work[j]!;
      }
      const s = Math.round(acc);
      out[produced++] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
      this.outputIndex++;
    }
    // keep the newest inputs for the next chunk
    const keep = Math.min(hist.length, work.length);
    hist.set(work.subarray(work.length - keep));
    this.historyLength = keep;
    this.inputIndex = endInput;
    return out.subarray(0, produced);
  }
}
