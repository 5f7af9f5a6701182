import { describe, expect, it } from 'vitest';
import { freeRtpPort } from './far-end.js';

// A range of four candidate blocks (21000, 21002, 21004, 21006), well
// below the kernel's ephemeral ports.
const MIN = 21000;
const MAX = 21012;

describe('freeRtpPort', () => {
  it('keeps its block of four clear of the blocks already handed out', async () => {
    for (let i = 0; i < 20; i++) {
      const port = await freeRtpPort(MIN, MAX, [MIN]);
      expect([21004, 21006]).toContain(port);
    }
  });

  it('gives up when every block overlaps one already handed out', async () => {
    await expect(freeRtpPort(MIN, MAX, [21000, 21004])).rejects.toThrow('no free RTP port');
  });
});
