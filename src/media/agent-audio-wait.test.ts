import { describe, expect, it } from 'vitest';
import { AgentAudioWait } from './agent-audio-wait.js';
import { SPACING_BIN_MS, SPACING_BINS } from './pacing-clock.js';

function counted(bins: Uint32Array): Record<number, number> {
  const out: Record<number, number> = {};
  bins.forEach((n, b) => {
    if (n > 0) out[b] = n;
  });
  return out;
}

describe('AgentAudioWait', () => {
  it('records from the first audio into an empty queue to the frame that carries it, once', () => {
    const bins = AgentAudioWait.histogram();
    const wait = new AgentAudioWait(bins);
    wait.queuedIntoEmpty(10);
    wait.queuedIntoEmpty(12); // still the first audio's wait
    expect(wait.pending).toBe(true);
    wait.sent(27.5);
    wait.sent(47.5); // the next frame of the same audio: not a new wait
    expect(counted(bins)).toEqual({ [17.5 / SPACING_BIN_MS]: 1 });
    expect(wait.pending).toBe(false);
  });

  it('forgets audio that was cleared or consumed on hold, and folds overflow into the last bin', () => {
    const bins = AgentAudioWait.histogram();
    const wait = new AgentAudioWait(bins);
    wait.queuedIntoEmpty(0);
    wait.cancel();
    wait.sent(5);
    expect(counted(bins)).toEqual({});
    wait.queuedIntoEmpty(100);
    wait.sent(100 + SPACING_BINS * SPACING_BIN_MS + 30);
    expect(counted(bins)).toEqual({ [SPACING_BINS - 1]: 1 });
  });
});
