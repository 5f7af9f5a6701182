// What the agent reports, as record patches: transcript lines with their
// seconds since the answer, results with the agent's total added once.
import { describe, expect, it } from 'vitest';
import { callRecordFixture } from '../../model/test-support/call-record-fixture.js';
import { resultPatch, transcriptPatch } from './agent-reports.js';

const ANSWER = Date.parse('2026-01-05T12:00:00.000Z');
const base = callRecordFixture({
  id: 'r',
  companyId: 'c',
  phoneNumber: '+12125550199',
  totalCost: 0.1,
});

describe('agent reports on the record', () => {
  it('transcript lines: role mapped, timestamp from the agent or now, seconds since the answer', () => {
    const first = transcriptPatch(
      base,
      { role: 'agent', content: 'Hi Ana' },
      ANSWER,
      ANSWER + 3000,
    )!;
    const next = { ...base, ...first };
    const second = transcriptPatch(
      next,
      { role: 'user', content: 'Stop calling', timestamp: ANSWER + 4500 },
      ANSWER,
      ANSWER + 9000,
    )!;
    expect(second.messages).toEqual([
      { role: 'Agent', content: 'Hi Ana', timestamp: '2026-01-05T12:00:03.000Z', seconds: 3 },
      {
        role: 'Contact',
        content: 'Stop calling',
        timestamp: '2026-01-05T12:00:04.500Z',
        seconds: 4.5,
      },
    ]);
    expect(second.aiDialogue).toEqual([
      { role: 'assistant', content: 'Hi Ana' },
      { role: 'user', content: 'Stop calling' },
    ]);
  });

  it('recordingEnabled false withholds the transcript (no patch)', () => {
    const unrecorded = { ...base, recordingEnabled: false };
    expect(
      transcriptPatch(unrecorded, { role: 'agent', content: 'Hi' }, ANSWER, ANSWER),
    ).toBeUndefined();
  });

  it("result fields copied; the agent's total added to the trunk's once, a later total replacing it", () => {
    const once = resultPatch(
      base,
      { summary: 's', totalCost: 0.05, outboundResult: { humanResponded: true } },
      0,
    );
    expect(once).toMatchObject({
      analysedByAi: 'completed',
      summary: 's',
      totalCost: 0.15,
      outboundResult: { humanResponded: true },
    });
    const again = resultPatch({ ...base, ...once }, { totalCost: 0.07 }, 0.05);
    expect(again.totalCost).toBe(0.17);
    expect(resultPatch(base, { outboundResult: 'interested' }, 0).outboundResultLabel).toBe(
      'interested',
    );
  });
});
