import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAgentFrame } from './agent-decoder.js';
import { EXTENSION_EVENTS } from './agent-messages.js';

const FULL_RESULT = {
  summary: 's',
  shortSummary: 'ss',
  postAnalysisResults: { interested: true },
  outboundResult: 'appointment_set',
  costs: { llm: 0.01, tts: 0.002 },
  funnelStatus: 'qualified',
  resolutionStatus: 'resolved',
  conversionStatus: 'converted',
};

/** A transfer with every field, read through as given. */
const FULL_TRANSFER = {
  destination: '+14155550123',
  destinationType: 'number',
  transferMode: 'attended',
  blindTransfer: false,
  transferReason: 'billing',
  messageToPersonWantingToBeTransferred: 'One moment.',
  announceTransferReason: true,
  showCallerId: false,
  secondsToWaitForCallerToAnswer: 25,
  fallbackToBridge: true,
};

const j = (v: unknown): string => JSON.stringify(v);

describe('decodeAgentFrame: Twilio messages', () => {
  it('media: base64 payload to bytes', () => {
    const f = decodeAgentFrame(j({ event: 'media', streamSid: 'MZ1', media: { payload: '/38A' } }));
    expect(f).toEqual({
      kind: 'message',
      message: { event: 'media', payload: Buffer.from([0xff, 0x7f, 0]) },
    });
  });

  it('mark and clear', () => {
    expect(decodeAgentFrame(j({ event: 'mark', streamSid: 'x', mark: { name: 'm1' } }))).toEqual({
      kind: 'message',
      message: { event: 'mark', name: 'm1' },
    });
    expect(decodeAgentFrame(j({ event: 'clear', streamSid: 'x' }))).toEqual({
      kind: 'message',
      message: { event: 'clear' },
    });
  });

  it('merge, cancel and swap: the consult actions of a warm or attended transfer', () => {
    for (const action of ['merge', 'cancel', 'swap'] as const) {
      expect(decodeAgentFrame(j({ event: action, streamSid: 'x' }))).toEqual({
        kind: 'message',
        message: { event: 'consult', data: { action } },
      });
    }
    expect(decodeAgentFrame(j({ event: 'consult' }))).toEqual({
      kind: 'unknown',
      event: 'consult',
    });
  });

  it.each([
    ['media without payload', { event: 'media', media: {} }],
    ['media with a number payload', { event: 'media', media: { payload: 5 } }],
    ['media with non-base64 text', { event: 'media', media: { payload: 'ab!d' } }],
    ['media with a truncated payload', { event: 'media', media: { payload: 'abc' } }],
    ['mark without name', { event: 'mark', mark: {} }],
    ['mark with empty name', { event: 'mark', mark: { name: '' } }],
  ])('%s is invalid', (_label, msg) => {
    expect(decodeAgentFrame(j(msg)).kind).toBe('invalid');
  });
});

describe('decodeAgentFrame: our extensions', () => {
  it.each([
    [
      { event: 'transcript', transcript: { role: 'user', content: 'hi', timestamp: 1234 } },
      { event: 'transcript', data: { role: 'user', content: 'hi', timestamp: 1234 } },
    ],
    [
      { event: 'transcript', role: 'agent', content: '' },
      { event: 'transcript', data: { role: 'agent', content: '' } },
    ],
    [
      { event: 'hangup', hangup: { reason: 'done' } },
      { event: 'hangup', data: { reason: 'done' } },
    ],
    [{ event: 'hangup' }, { event: 'hangup', data: {} }],
    [
      { event: 'sendDtmf', sendDtmf: { digits: '12#w*' } },
      { event: 'sendDtmf', data: { digits: '12#w*' } },
    ],
    [
      {
        event: 'transfer',
        transfer: { to: 'sip:desk@example.com', mode: 'blind', headers: { 'X-A': '1' } },
      },
      {
        // the first version's names (to, mode) read as destination, transferMode; headers dropped
        event: 'transfer',
        data: { destination: 'sip:desk@example.com', transferMode: 'blind' },
      },
    ],
    [
      { event: 'transfer', transfer: FULL_TRANSFER },
      { event: 'transfer', data: FULL_TRANSFER },
    ],
    [
      { event: 'result', result: { ...FULL_RESULT, extra: 'dropped' } },
      { event: 'result', data: FULL_RESULT },
    ],
    [
      { event: 'voicemail', voicemail: { messageLeft: true } },
      { event: 'voicemail', data: { messageLeft: true } },
    ],
    [{ event: 'voicemail' }, { event: 'voicemail', data: { messageLeft: false } }],
  ])('%j', (msg, message) => {
    expect(decodeAgentFrame(j(msg))).toEqual({ kind: 'message', message });
  });

  it.each([
    { event: 'transcript', transcript: { role: 'user' } },
    { event: 'transcript', transcript: { role: 5, content: 'x' } },
    { event: 'transcript', transcript: { role: 'user', content: 'x', timestamp: {} } },
    { event: 'hangup', hangup: { reason: 42 } },
    { event: 'sendDtmf', sendDtmf: { digits: '12x' } },
    { event: 'sendDtmf', sendDtmf: { digits: '' } },
    { event: 'sendDtmf' },
    { event: 'transfer', transfer: {} },
    { event: 'transfer', transfer: { to: '+15550100', mode: 'teleport' } },
    { event: 'transfer', transfer: { destination: '+15550100', destinationType: 'phone' } },
    { event: 'transfer', transfer: { destination: '+15550100', showCallerId: 'yes' } },
    { event: 'transfer', transfer: { destination: '+15550100', fallbackToBridge: 1 } },
    {
      event: 'transfer',
      transfer: { destination: '+15550100', secondsToWaitForCallerToAnswer: 0 },
    },
    { event: 'result', result: { summary: 7 } },
    { event: 'result', result: { costs: { llm: 'cheap' } } },
    { event: 'result', result: { postAnalysisResults: [1] } },
    { event: 'voicemail', voicemail: { messageLeft: 'yes' } },
  ])('rejects %j as invalid', (msg) => {
    expect(decodeAgentFrame(j(msg)).kind).toBe('invalid');
  });
});

describe('decodeAgentFrame: what is not a message', () => {
  it.each(['', 'not json', '{"event":', '[]', '42', 'null', '{"evt":"media"}', '{"event":3}'])(
    '%j is malformed',
    (text) => {
      expect(decodeAgentFrame(text)).toEqual({ kind: 'malformed' });
    },
  );

  it.each(['connected', 'start', 'stop', 'dtmf', 'toString', '__proto__', 'hasOwnProperty'])(
    'event %s is unknown (ignored)',
    (event) => {
      expect(decodeAgentFrame(j({ event }))).toEqual({ kind: 'unknown', event });
    },
  );

  it('never throws, whatever the text (fast-check, fixed seed)', () => {
    const events = fc.constantFrom('media', 'mark', 'clear', 'x', ...EXTENSION_EVENTS);
    const shaped = fc
      .record({ event: events, body: fc.jsonValue() })
      .map(({ event, body }) => j({ event, [event]: body, media: body }));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), shaped), (text) => {
        const f = decodeAgentFrame(text);
        expect(['message', 'malformed', 'invalid', 'unknown']).toContain(f.kind);
      }),
      { seed: 20260105, numRuns: 5000 },
    );
  });
});

describe('decodeAgentFrame: result, the record fields', () => {
  it('outboundResult as the spec object, cost fields as given', () => {
    const result = {
      outboundResult: {
        humanResponded: true,
        askedToCallBackLater: true,
        dateTimeToCallBack: '2026-01-06T09:00:00Z',
      },
      voiceCost: { cost: 0.01, totalCost: 0.01 },
      completionCost: { inputTokens: 10, totalCost: 0.002, speculative: false },
      transcriptionCost: 0.003,
      totalCost: 0.02,
    };
    expect(decodeAgentFrame(j({ event: 'result', result }))).toEqual({
      kind: 'message',
      message: { event: 'result', data: result },
    });
  });

  it.each([
    ['a flag that is not a boolean', { outboundResult: { askedToNeverCallAgain: 'yes' } }],
    ['a callback time that is not a date', { outboundResult: { dateTimeToCallBack: 'soon' } }],
    ['a text voiceCost', { voiceCost: { cost: 'x' } }],
    ['a text totalCost', { totalCost: '1' }],
  ])('%s is invalid', (_name, result) => {
    expect(decodeAgentFrame(j({ event: 'result', result }))).toEqual({
      kind: 'invalid',
      event: 'result',
    });
  });
});
