// The call-rate ramp's own limits: the rate actually placed, and the
// initiate-call p99 (issue 28 names it among the limits that end the ramp).
import { describe, expect, it } from 'vitest';
import { rateStepBreaks } from './step-summary.js';

const limits = { apiP99Ms: 100 };

describe('rateStepBreaks', () => {
  it('passes a step that placed its rate with initiate-call p99 within the limit', () => {
    expect(rateStepBreaks({ sustainedCps: 39.9 }, { apiP99Ms: 99.9 }, 40, limits)).toEqual([]);
    expect(rateStepBreaks({ sustainedCps: 36 }, { apiP99Ms: 100 }, 40, limits)).toEqual([]);
  });

  it('breaks a step whose initiate-call p99 is over the limit', () => {
    expect(rateStepBreaks({ sustainedCps: 50 }, { apiP99Ms: 131.7 }, 50, limits)).toEqual([
      'initiate-call p99 131.7 ms > 100 ms',
    ]);
    expect(rateStepBreaks({ sustainedCps: 50 }, { apiP99Ms: 60 }, 50, { apiP99Ms: 50 })).toEqual([
      'initiate-call p99 60 ms > 50 ms',
    ]);
  });

  it('breaks a step that placed under 90 % of its rate, with both reasons when both hold', () => {
    expect(rateStepBreaks({ sustainedCps: 35.9 }, { apiP99Ms: 250 }, 40, limits)).toEqual([
      'sustained 35.9/s < 90 % of 40/s',
      'initiate-call p99 250 ms > 100 ms',
    ]);
  });
});
