// Our UAC against SIPp as the called party: answer, hang-ups, provisional responses.

import { afterEach, describe, expect, it } from 'vitest';
import type { SipStack } from '../src/sip/index.js';
import { inviteOptions, record, startStack } from './helpers.js';
import { startSipp, type SippProcess } from './runner/sipp-runner.js';

let stack: SipStack | undefined;
let sipp: SippProcess | undefined;

afterEach(async () => {
  sipp?.kill();
  await stack?.stop();
  stack = undefined;
  sipp = undefined;
});

describe('UAC against SIPp UAS (udp)', () => {
  it('answers, then we send BYE (uas-200-bye-from-us)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-200-bye-from-us.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    const answered = await rec.wait('answered');
    expect(answered.sdp).toContain('m=audio');
    await leg.bye({ q850: 16, text: 'Normal call clearing' });
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
    expect(rec.names()).toEqual(['provisional', 'answered', 'ended']);
    expect(rec.events.at(-1)).toMatchObject({ event: 'ended', data: { by: 'local' } });
  });
});
