import { describe, expect, it } from 'vitest';
import { estimateSrtpIndex, rocOf } from './srtp-index.js';

const index = (roc: number, seq: number): number => roc * 65536 + seq;

describe('SRTP packet index estimation (RFC 3711 §3.3.1, Appendix A)', () => {
  it('takes the first packet as ROC 0', () => {
    expect(estimateSrtpIndex(-1, 12345)).toBe(12345);
  });

  it('keeps the ROC for packets near s_l', () => {
    expect(estimateSrtpIndex(index(3, 1000), 1001)).toBe(index(3, 1001));
    expect(estimateSrtpIndex(index(3, 1000), 900)).toBe(index(3, 900));
    expect(estimateSrtpIndex(index(3, 40000), 40100)).toBe(index(3, 40100));
  });

  it('guesses ROC + 1 when SEQ wraps past 65535 (s_l >= 2^15)', () => {
    expect(estimateSrtpIndex(index(0, 65535), 0)).toBe(index(1, 0));
    expect(estimateSrtpIndex(index(7, 65500), 20)).toBe(index(8, 20));
  });

  it('guesses ROC - 1 for a late packet from before the wrap (s_l < 2^15)', () => {
    expect(estimateSrtpIndex(index(1, 2), 65535)).toBe(index(0, 65535));
    expect(estimateSrtpIndex(index(5, 100), 65000)).toBe(index(4, 65000));
  });

  it('returns -1 for ROC - 1 with ROC 0: a packet from before the stream began', () => {
    expect(estimateSrtpIndex(index(0, 100), 40000)).toBe(-1);
  });

  it('splits an index into its ROC', () => {
    expect(rocOf(index(0, 65535))).toBe(0);
    expect(rocOf(index(1, 0))).toBe(1);
    expect(rocOf(index(0xffffffff, 65535))).toBe(0xffffffff);
  });
});
