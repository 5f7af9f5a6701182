// Our UAC against SIPp as the called party: answers, hang-ups, provisional
// responses, TCP, retransmitted 2xx. Each test checks SIPp's verdict AND ours.

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

async function answeredCall(
  scenario: string,
  transport: 'udp' | 'tcp',
  defaults = false,
): Promise<void> {
  stack = await startStack(defaults ? {} : undefined);
  sipp = await startSipp({ scenario, transport });
  const leg = stack.invite(inviteOptions(sipp.port, transport));
  const rec = record(leg);
  const answered = await rec.wait('answered');
  expect(answered.sdp).toContain('m=audio');
  await leg.bye({ q850: 16, text: 'Normal call clearing' });
  const result = await sipp.done;
  expect(result.code, result.errors).toBe(0);
  expect(rec.events.at(-1)).toMatchObject({ event: 'ended', data: { by: 'local' } });
}

describe('UAC against SIPp UAS', () => {
  it('answers, then we send BYE with a Reason (uas-200-bye-from-us)', async () => {
    await answeredCall('uas-200-bye-from-us.xml', 'udp');
  });

  it('same call over TCP (-t t1)', async () => {
    await answeredCall('uas-200-bye-from-us.xml', 'tcp');
  });

  it('180 then 200, at RFC default timers (uas-180-200)', async () => {
    await answeredCall('uas-180-200.xml', 'udp', true);
  });

  it('reports 180 before the answer', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-180-200.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    await rec.wait('answered');
    await leg.bye();
    expect((await sipp.done).code).toBe(0);
    expect(
      rec.events
        .filter((e) => e.event === 'provisional')
        .map((e) => (e.data as { status: number }).status),
    ).toEqual([100, 180]);
  });

  it('183 with early SDP, then 200 (uas-183-sdp-200)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-183-sdp-200.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    const early = await rec.wait('provisional');
    expect(early.status).toBe(183);
    expect(early.sdp).toContain('m=audio');
    await rec.wait('answered');
    await leg.bye();
    expect((await sipp.done).code).toBe(0);
  });

  it('far end hangs up (uas-200-bye-from-far-end)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-200-bye-from-far-end.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    const ended = await rec.wait('ended');
    expect(ended.by).toBe('remote');
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
  });

  it('sends the ACK again when the 200 is retransmitted (uas-200-retransmitted-ack-again)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-200-retransmitted-ack-again.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    await rec.wait('answered');
    // Give the retransmitted 200 time to arrive and be ACKed again.
    for (let i = 0; i < 100 && stack.stats().retransmissionsIn === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    await leg.bye();
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
    expect(stack.stats().retransmissionsIn).toBeGreaterThanOrEqual(1);
    expect(result.messages.match(/^ACK sip:/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(rec.names().filter((n) => n === 'answered')).toHaveLength(1);
  });
});
