// RFC 3515 REFER follow-up under a manual clock: the sipfrag status line
// (RFC 3420), Subscription-State and Event parsing, and how a pending REFER
// settles (refused / transferred / failed / no_notify).

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../transport/fake-clock.js';
import {
  parseEventHeader,
  parseSipfrag,
  parseSubscriptionState,
  ReferSubscription,
  type ReferOutcome,
  type ReferProgress,
} from './refer-subscription.js';

describe('message/sipfrag status line (RFC 3420)', () => {
  it('reads the status and reason', () => {
    expect(parseSipfrag('SIP/2.0 200 OK')).toEqual({ status: 200, reason: 'OK' });
    expect(parseSipfrag('SIP/2.0 100 Trying\r\n')).toEqual({ status: 100, reason: 'Trying' });
    expect(parseSipfrag('SIP/2.0 486 Busy Here\r\nContent-Length: 0\r\n\r\n')).toEqual({
      status: 486,
      reason: 'Busy Here',
    });
  });

  it('is lenient with blank space, case and a missing reason', () => {
    expect(parseSipfrag('\r\n  sip/2.0 180 Ringing  \r\n')).toEqual({
      status: 180,
      reason: 'Ringing',
    });
    expect(parseSipfrag('SIP/2.0 603')).toEqual({ status: 603, reason: '' });
    expect(parseSipfrag('\uFEFFSIP/2.0\t183\tSession Progress')).toEqual({
      status: 183,
      reason: 'Session Progress',
    });
  });

  it('refuses what is no status line', () => {
    for (const body of [
      '',
      'OK',
      'SIP/2.0 99 Low',
      'SIP/2.0 700 High',
      'SIP/2.0 2000 OK',
      'INVITE sip:bob@example.com SIP/2.0',
      'SIP/3.0 200 OK',
      'SIP/2.0200 OK',
      'garbage SIP/2.0 200 OK',
    ])
      expect(parseSipfrag(body), body).toBeUndefined();
  });

  it('Subscription-State and Event values', () => {
    expect(parseSubscriptionState('active;expires=60')).toEqual({ state: 'active' });
    expect(parseSubscriptionState('Terminated ; Reason=noresource')).toEqual({
      state: 'terminated',
      reason: 'noresource',
    });
    expect(parseSubscriptionState(undefined)).toBeUndefined();
    expect(parseSubscriptionState('')).toBeUndefined();
    expect(parseEventHeader('refer')).toEqual({ package: 'refer' });
    expect(parseEventHeader('Refer;id=7')).toEqual({ package: 'refer', id: '7' });
    expect(parseEventHeader('dialog')).toEqual({ package: 'dialog' });
    expect(parseEventHeader(undefined)).toBeUndefined();
  });
});

function pending(timeoutMs = 32_000) {
  const clock = new FakeClock();
  const progress: ReferProgress[] = [];
  const sub = new ReferSubscription(clock, 3, timeoutMs, (p) => progress.push(p));
  let outcome: ReferOutcome | undefined;
  void sub.promise.then((o) => (outcome = o));
  const settled = async (): Promise<ReferOutcome | undefined> => {
    await Promise.resolve();
    await Promise.resolve();
    return outcome;
  };
  return { clock, sub, progress, settled };
}

const frag = (line: string, state = 'active;expires=60') => ({
  subscriptionState: state,
  body: `${line}\r\n`,
});

describe('a pending REFER', () => {
  it('202, NOTIFY 100, NOTIFY 200 → transferred, the 100 reported as progress', async () => {
    const { sub, progress, settled, clock } = pending();
    sub.onReferResponse(202, 'Accepted');
    expect(sub.accepted).toBe(true);
    sub.onNotify(frag('SIP/2.0 100 Trying'));
    sub.onNotify(frag('SIP/2.0 180 Ringing'));
    expect(await settled()).toBeUndefined();
    sub.onNotify(frag('SIP/2.0 200 OK', 'terminated;reason=noresource'));
    expect(await settled()).toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
    expect(progress).toEqual([
      { status: 100, reason: 'Trying' },
      { status: 180, reason: 'Ringing' },
    ]);
    expect(clock.timerCount).toBe(0);
  });

  it('a final non-2xx sipfrag → failed', async () => {
    const { sub, settled } = pending();
    sub.onReferResponse(202, 'Accepted');
    sub.onNotify(frag('SIP/2.0 486 Busy Here', 'terminated;reason=noresource'));
    expect(await settled()).toEqual({ kind: 'failed', status: 486, reason: 'Busy Here' });
  });

  it('the REFER refused → refused with its status; nothing back → refused 0', async () => {
    const a = pending();
    a.sub.onReferResponse(405, 'Method Not Allowed');
    expect(await a.settled()).toEqual({
      kind: 'refused',
      status: 405,
      reason: 'Method Not Allowed',
    });
    const b = pending();
    b.sub.onReferResponse(0, 'timeout');
    expect(await b.settled()).toEqual({ kind: 'refused', status: 0, reason: 'timeout' });
  });

  it('accepted, then silence → no_notify after the timeout (counted from the 2xx)', async () => {
    const { sub, settled, clock } = pending(5000);
    clock.advance(10_000); // no timer before the 2xx: Timer F decides that part
    sub.onReferResponse(202, 'Accepted');
    sub.onNotify(frag('SIP/2.0 100 Trying'));
    clock.advance(4999);
    expect(await settled()).toBeUndefined();
    clock.advance(1);
    expect(await settled()).toEqual({ kind: 'no_notify', status: 0, reason: 'timeout' });
  });

  it('a malformed sipfrag is no news; terminated without a final → no_notify', async () => {
    const { sub, settled, progress } = pending();
    sub.onReferResponse(202, 'Accepted');
    sub.onNotify(frag('hello'));
    expect(progress).toEqual([]);
    expect(await settled()).toBeUndefined();
    sub.onNotify(frag('SIP/2.0 100 Trying', 'terminated;reason=timeout'));
    expect(await settled()).toEqual({
      kind: 'no_notify',
      status: 0,
      reason: 'subscription_terminated:timeout',
    });
  });

  it('a final NOTIFY overtaking the 202 counts; the late 202 changes nothing', async () => {
    const { sub, settled, clock } = pending();
    sub.onNotify(frag('SIP/2.0 200 OK', 'terminated'));
    sub.onReferResponse(202, 'Accepted');
    expect(await settled()).toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
    expect(clock.timerCount).toBe(0);
  });

  it('the dialog ends: at once once accepted, else when the 2xx comes', async () => {
    const a = pending();
    a.sub.onReferResponse(202, 'Accepted');
    a.sub.dialogEnded();
    expect(await a.settled()).toEqual({ kind: 'no_notify', status: 0, reason: 'dialog_ended' });
    expect(a.clock.timerCount).toBe(0);
    const b = pending();
    b.sub.dialogEnded();
    expect(await b.settled()).toBeUndefined();
    b.sub.onReferResponse(202, 'Accepted');
    expect(await b.settled()).toEqual({ kind: 'no_notify', status: 0, reason: 'dialog_ended' });
  });

  it('a throwing progress callback does not stop it', async () => {
    const clock = new FakeClock();
    const sub = new ReferSubscription(clock, 2, 1000, () => {
      throw new Error('boom');
    });
    sub.onReferResponse(202, 'Accepted');
    sub.onNotify(frag('SIP/2.0 100 Trying'));
    sub.onNotify(frag('SIP/2.0 200 OK'));
    await expect(sub.promise).resolves.toEqual({ kind: 'transferred', status: 200, reason: 'OK' });
  });
});
