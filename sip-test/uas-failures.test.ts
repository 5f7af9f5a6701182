// Final failure responses, digest auth and CANCEL against SIPp. Each test
// checks SIPp's verdict AND the `failed` event our leg reported.

import { afterEach, describe, expect, it } from 'vitest';
import type { FailedEvent, InviteOptions, SipStack } from '../src/sip/index.js';
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

async function failedCall(
  scenario: string,
  extra: Partial<InviteOptions> = {},
): Promise<FailedEvent> {
  stack = await startStack();
  sipp = await startSipp({ scenario });
  const leg = stack.invite(inviteOptions(sipp.port, 'udp', extra));
  const rec = record(leg);
  const failed = await rec.wait('failed');
  const result = await sipp.done;
  expect(result.code, result.errors).toBe(0);
  expect(rec.names()).not.toContain('answered');
  return failed;
}

describe('UAC failures against SIPp UAS', () => {
  it('486 with Reason Q.850 cause 17 (uas-486-q850-busy)', async () => {
    const f = await failedCall('uas-486-q850-busy.xml');
    expect(f).toMatchObject({ status: 486, reason: 'Busy Here', q850: 17, cause: 'response' });
    expect(f.reasonHeader).toContain('cause=17');
  });

  it('603 Decline (uas-603-decline)', async () => {
    expect(await failedCall('uas-603-decline.xml')).toMatchObject({
      status: 603,
      cause: 'response',
    });
  });

  it('404 with a Warning (uas-404-not-found)', async () => {
    const f = await failedCall('uas-404-not-found.xml');
    expect(f).toMatchObject({
      status: 404,
      warningCode: 399,
      warningText: 'Number not in service',
    });
  });

  it('480 with Reason cause 18 (uas-480-unavailable)', async () => {
    expect(await failedCall('uas-480-unavailable.xml')).toMatchObject({ status: 480, q850: 18 });
  });

  it('503 with Retry-After (uas-503-retry-after)', async () => {
    expect(await failedCall('uas-503-retry-after.xml')).toMatchObject({
      status: 503,
      retryAfter: 120,
    });
  });

  it('wrong credentials: two authorised attempts, then the 401 is final (uas-401-wrong-credentials)', async () => {
    const f = await failedCall('uas-401-wrong-credentials.xml', {
      credentials: { username: 'alice', password: 'wrong' },
    });
    expect(f).toMatchObject({ status: 401, cause: 'response' });
  });
});

describe('digest auth against SIPp', () => {
  for (const [scenario, status] of [
    ['uas-401-then-200.xml', 401],
    ['uas-407-then-200.xml', 407],
  ] as const) {
    it(`${status} then 200 with the right password (${scenario})`, async () => {
      stack = await startStack();
      sipp = await startSipp({ scenario });
      const leg = stack.invite(
        inviteOptions(sipp.port, 'udp', { credentials: { username: 'alice', password: 'secret' } }),
      );
      const rec = record(leg);
      await rec.wait('answered');
      await leg.bye();
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
      // RFC 3261 §22.2: same Call-ID, CSeq incremented.
      const cseqs = [...result.messages.matchAll(/^CSeq: (\d+) INVITE/gm)].map((m) => m[1]);
      expect(cseqs).toContain('2');
    });
  }
});

describe('CANCEL against SIPp', () => {
  it('ring without answer: our CANCEL, then 487 (uas-180-cancel-487)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-180-cancel-487.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    // Our ring timeout, in effect: cancel once it rings.
    leg.on('provisional', (p) => {
      if (p.status === 180) leg.cancel();
    });
    const f = await rec.wait('failed');
    expect(f).toMatchObject({ status: 487, cause: 'cancelled' });
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
  });

  it('CANCEL crossing a 200: ACK then BYE (uas-200-crosses-cancel)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-200-crosses-cancel.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    leg.on('provisional', (p) => {
      if (p.status === 180) leg.cancel();
    });
    const f = await rec.wait('failed');
    expect(f).toMatchObject({ status: 200, cause: 'cancelled' });
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
    expect(rec.names()).not.toContain('answered');
  });
});
