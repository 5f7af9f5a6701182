// In-dialog requests from SIPp: re-INVITE to hold, INFO DTMF; and UDP loss.

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

describe('in-dialog requests from SIPp', () => {
  it('re-INVITE with a=sendonly is reported as hold and answered recvonly (uas-reinvite-hold)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-reinvite-hold.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    const re = await rec.wait('reinvite');
    expect(re).toMatchObject({ hold: true, method: 'INVITE' });
    const ended = await rec.wait('ended');
    expect(ended.by).toBe('remote');
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
  });

  it('re-INVITE answer comes from the answerOffer callback when given', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-reinvite-hold.xml' });
    const offers: string[] = [];
    const leg = stack.invite(
      inviteOptions(sipp.port, 'udp', {
        answerOffer: (o) => {
          offers.push(o.sdp);
          return 'v=0\r\no=gw 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=recvonly\r\n';
        },
      }),
    );
    const rec = record(leg);
    await rec.wait('ended');
    expect((await sipp.done).code).toBe(0);
    expect(offers).toHaveLength(1);
  });

  it('INFO application/dtmf-relay Signal=5 becomes a dtmf event (uas-info-dtmf)', async () => {
    stack = await startStack();
    sipp = await startSipp({ scenario: 'uas-info-dtmf.xml' });
    const leg = stack.invite(inviteOptions(sipp.port));
    const rec = record(leg);
    const dtmf = await rec.wait('dtmf');
    expect(dtmf).toEqual({ digit: '5', durationMs: 160 });
    await rec.wait('ended');
    const result = await sipp.done;
    expect(result.code, result.errors).toBe(0);
  });
});

describe('UDP loss (SIPp lost="30" on requests and responses)', () => {
  it('calls still complete by retransmission (uas-loss-retransmit)', async () => {
    stack = await startStack();
    for (let i = 0; i < 3; i++) {
      sipp = await startSipp({ scenario: 'uas-loss-retransmit.xml', timeoutSec: 20 });
      const leg = stack.invite(inviteOptions(sipp.port));
      const rec = record(leg);
      await rec.wait('answered', 15_000);
      // Let a lost ACK be recovered by the 200 retransmission before hanging up.
      await new Promise((r) => setTimeout(r, 300));
      await leg.bye();
      expect(rec.names()).toContain('ended');
      const result = await sipp.done;
      expect(result.code, result.errors).toBe(0);
    }
  }, 60_000);
});
