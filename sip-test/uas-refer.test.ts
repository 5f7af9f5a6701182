// Blind transfer by REFER (RFC 3515) from our stack to a SIPp far end: the
// REFER as the far end checks it (Refer-To, Referred-By, CSeq 2), its NOTIFYs
// (message/sipfrag) answered 200 and turned into an outcome; the test, in the
// domain's place, sends the BYE afterwards.

import { afterEach, describe, expect, it } from 'vitest';
import type { ReferProgress, SipStack } from '../src/sip/index.js';
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

const TRANSFER = {
  referTo: 'sip:+14155550123@carrier.example',
  referredBy: '<sip:+12125550100@gateway>',
};

async function transfer(scenario: string) {
  stack = await startStack();
  sipp = await startSipp({ scenario });
  const leg = stack.invite(inviteOptions(sipp.port));
  const rec = record(leg);
  await rec.wait('answered');
  const progress: ReferProgress[] = [];
  const outcome = await leg.refer(TRANSFER, (p) => progress.push(p), 5000);
  const stateAfter = leg.state;
  await leg.bye();
  const result = await sipp.done;
  return { outcome, progress, stateAfter, result, rec };
}

describe('REFER to a SIPp far end', () => {
  it('202, NOTIFY 100 Trying, NOTIFY 200 OK → transferred; the leg stays up until our BYE (uas-refer-accept-notify-100-200)', async () => {
    const r = await transfer('uas-refer-accept-notify-100-200.xml');
    expect(r.outcome).toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
    expect(r.progress).toEqual([{ status: 100, reason: 'Trying' }]);
    expect(r.stateAfter).toBe('confirmed');
    expect(r.result.code, r.result.errors).toBe(0);
  });

  it('405 to the REFER → refused 405, the call stays up (uas-refer-405)', async () => {
    const r = await transfer('uas-refer-405.xml');
    expect(r.outcome).toEqual({ kind: 'refused', status: 405, reason: 'Method Not Allowed' });
    expect(r.progress).toEqual([]);
    expect(r.stateAfter).toBe('confirmed');
    expect(r.result.code, r.result.errors).toBe(0);
  });

  it('NOTIFY 486 Busy Here → failed 486 (uas-refer-notify-486)', async () => {
    const r = await transfer('uas-refer-notify-486.xml');
    expect(r.outcome).toEqual({ kind: 'failed', status: 486, reason: 'Busy Here' });
    expect(r.progress).toEqual([{ status: 100, reason: 'Trying' }]);
    expect(r.stateAfter).toBe('confirmed');
    expect(r.result.code, r.result.errors).toBe(0);
  });
});
