// Issue 23 item 6, "No zombie calls" (docs/decisions/no-zombie-calls.md):
// the started daemon against SIPp far ends.
//
// RFC 4028 session timers: our INVITE asks for them (Session-Expires from
// sip.sessionExpiresSeconds, Min-SE, Supported: timer); the far end's 2xx
// decides the interval and the refresher (§7.2). The daemon keeps the RFC's
// 90 s floor for what IT asks; the far ends here answer with short intervals
// (6-10 s), which a UAC takes as given, so the tests run in seconds.
//   - we refresh and the far end answers: the call outlives its interval;
//   - we refresh and the far end stops answering: BYE, failed_during_call /
//     no_voip_connection (endDetail session_refresh_no_answer), within the
//     interval counted from the last refresh that worked;
//   - the far end is the refresher and never refreshes: BYE at interval −
//     interval/3, no_voip_connection / session_expired;
//   - the far end refreshes: the call lives on until it hangs up;
//   - 422 Session Interval Too Small: the INVITE again with its Min-SE.
// And the liveness rule: a far end that holds the call (no RTP expected) and
// then answers nothing: after rtp.inactivitySeconds without RTP it is asked
// in its dialog (OPTIONS); no answer → BYE, no_voip_connection /
// far_end_probe_no_answer.
//
// T1 is 50 ms here, so a request nobody answers times out in 3.2 s (Timer F).
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import { FarEnds, type FarEndOptions } from './support/far-end.js';
import { startGateway, type Gateway } from './support/gateway-harness.js';

let gw: Gateway;
const farEnds = new FarEnds();
let n = 0;
// New York numbers of this file (+1 212 555 04xx), one per test.
const number = () => `+1212555${String(410 + n++).padStart(4, '0')}`;

beforeAll(async () => {
  gw = await startGateway({
    GATEWAY_SIP_T1_MS: '50',
    GATEWAY_SIP_T2_MS: '400',
    GATEWAY_SIP_T4_MS: '500',
    GATEWAY_SIP_SESSION_EXPIRES_SECONDS: '1800',
    GATEWAY_SIP_SESSION_MIN_EXPIRES_SECONDS: '90',
    // The far ends echo our RTP (-rtp_echo), except the one that holds the
    // call: there no RTP is expected, and the liveness rule is at work.
    GATEWAY_RTP_INACTIVITY_SECONDS: '3',
    GATEWAY_RATE_LIMIT_MAX: '100000',
  });
}, 30_000);
afterAll(async () => {
  farEnds.killAll();
  await gw?.stop();
});

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

/** Request lines of `method` in a SIPp message log (each message once, retransmissions included). */
const requests = (messages: string, method: string) =>
  messages.split(/\n(?=(?:[A-Z]+ sip:|SIP\/2\.0 ))/).filter((m) => m.startsWith(`${method} sip:`));

const header = (msg: string, name: string) =>
  new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(msg)?.[1]?.trim();

/**
 * A call to a SIPp far end playing `scenario`, waited for up to `waitMs`: its
 * record and SIPp's result (SIPp exited 0).
 */
async function callFarEnd(
  expect: ExpectStatic,
  scenario: string,
  options: FarEndOptions,
  waitMs: number,
) {
  const sipp = await farEnds.start(scenario, options);
  const callId = await gw.call(await gw.trunk(sipp.port), number());
  const rec = await gw.waitFor(callId, undefined, waitMs);
  const res = await sipp.done;
  expect(res.code, res.errors).toBe(0);
  return { rec, res };
}

/**
 * The call failed during the call, no_voip_connection / `endDetail`, ended
 * more than `min` and less than `max` s after the answer.
 */
function expectDropped(
  expect: ExpectStatic,
  rec: { startAt: string; endAt: string },
  endDetail: string,
  min: number,
  max: number,
) {
  expect(rec).toMatchObject({
    status: 'failed_during_call',
    endCallReason: 'no_voip_connection',
    endDetail,
  });
  const took = seconds(rec.startAt, rec.endAt);
  expect(took).toBeGreaterThan(min);
  expect(took).toBeLessThan(max);
}

describe.concurrent('session timers against SIPp far ends', () => {
  it('we refresh (UPDATE) and the far end answers: the call outlives its 6 s interval, ends caller_hungup', async ({
    expect,
  }) => {
    const { rec, res } = await callFarEnd(
      expect,
      'uas-session-timer-refreshed.xml',
      { rtpEcho: true, keys: { se: '6' }, timeoutSec: 40 },
      30_000,
    );
    const invite = requests(res.messages, 'INVITE')[0]!;
    expect(header(invite, 'Session-Expires')).toBe('1800');
    expect(header(invite, 'Min-SE')).toBe('90');
    expect(header(invite, 'Supported')).toMatch(/\btimer\b/);
    const updates = requests(res.messages, 'UPDATE');
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(header(updates[0]!, 'Session-Expires')).toBe('6;refresher=uac');
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    // three refreshes at 3 s: at least 9 s, past the 6 s interval
    expect(seconds(rec.startAt, rec.endAt)).toBeGreaterThanOrEqual(8.5);
  });

  it('we refresh (re-INVITE) and the far end stops answering: BYE within the interval, failed_during_call / no_voip_connection', async ({
    expect,
  }) => {
    const { rec, res } = await callFarEnd(
      expect,
      'uas-session-timer-stops-answering.xml',
      { rtpEcho: true, keys: { se: '10' }, timeoutSec: 40 },
      30_000,
    );
    // refresh 1 answered at 5 s; refresh 2 at 10 s, unanswered for Timer B (3.2 s):
    // ended 13.2 s after the answer, inside the interval counted from refresh 1 (15 s).
    expectDropped(expect, rec, 'session_refresh_no_answer', 12, 15);
    expect(requests(res.messages, 'BYE')).not.toHaveLength(0);
  });

  it('the far end is the refresher and never refreshes: BYE at 9 − 9/3 = 6 s, no_voip_connection / session_expired', async ({
    expect,
  }) => {
    const { rec, res } = await callFarEnd(
      expect,
      'uas-session-timer-never-refreshes.xml',
      { rtpEcho: true, keys: { se: '9' }, timeoutSec: 30 },
      20_000,
    );
    expectDropped(expect, rec, 'session_expired', 5.5, 7.5);
    expect(header(requests(res.messages, 'BYE')[0]!, 'Reason')).toMatch(/^Q\.850;cause=102/);
  });

  it('the far end refreshes every 3 s (interval 6 s): the call lives on until it hangs up', async ({
    expect,
  }) => {
    const { rec } = await callFarEnd(
      expect,
      'uas-session-timer-far-refreshes.xml',
      { rtpEcho: true, keys: { se: '6' }, timeoutSec: 40 },
      30_000,
    );
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    expect(seconds(rec.startAt, rec.endAt)).toBeGreaterThanOrEqual(8.5);
  });

  it('422 Session Interval Too Small: the INVITE again with CSeq + 1 asking for the far end’s Min-SE', async ({
    expect,
  }) => {
    const { rec, res } = await callFarEnd(
      expect,
      'uas-422-then-200.xml',
      { rtpEcho: true, keys: { minse: '3600' }, timeoutSec: 30 },
      20_000,
    );
    const invites = requests(res.messages, 'INVITE');
    const [first, second] = [invites[0]!, invites.find((m) => /^CSeq:\s*2 INVITE/im.test(m))!];
    expect(header(first, 'Session-Expires')).toBe('1800');
    expect(header(second, 'Session-Expires')).toBe('3600');
    expect(header(second, 'Min-SE')).toBe('3600');
    expect(header(second, 'Call-ID')).toBe(header(first, 'Call-ID'));
    expect(rec).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
  });
});

describe('liveness: no RTP from the far end and no answer in its dialog', () => {
  it('a far end that holds the call and vanishes: OPTIONS unanswered → BYE, no_voip_connection / far_end_probe_no_answer', async ({
    expect,
  }) => {
    const { rec, res } = await callFarEnd(
      expect,
      'uas-hold-then-vanish.xml',
      { timeoutSec: 40 },
      30_000,
    );
    // silence noticed on a 5 s media report (≥ 3 s), then Timer F (3.2 s)
    expectDropped(expect, rec, 'far_end_probe_no_answer', 6, 15);
    expect(requests(res.messages, 'OPTIONS')).not.toHaveLength(0);
  });
});
