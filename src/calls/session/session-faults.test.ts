// docs/decisions/dial-path.md "A session that throws": an exception at any
// stage of a call ends its record in a final status within a second
// (`failed` / `failed_to_connect` before the answer, `failed_during_call`
// after, `endDetail: session_error`), CANCELs or BYEs the leg when there is
// one, closes the media session (the real MediaEngine: its port pool full
// again, nothing behind `gateway_media_sessions`) and the agent link, and
// the dialer lets go of the session (`gateway_calls_live`).
//
// Faults enter through the ports: a media session method that throws, a
// SignalingPort whose invite throws (a plain error; the real embedded SIP
// stack refusing a CR/LF header), a record write that throws once at a
// chosen moment, an agent link that throws.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallPatch } from '../../model/call-record.js';
import { isFinal } from '../../model/call-status.js';
import { createSipStack, SipStackError } from '../../sip/index.js';
import {
  FaultRig,
  portPairFree,
  sleep,
  until,
  type FaultSnapshot,
  type RigOptions,
} from './test-support/fault-rig.js';
import { FakeLeg } from './test-support/fake-leg.js';

let rig: FaultRig | undefined;
let unhandled: unknown[];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeEach(() => {
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  await rig?.dispose();
  rig = undefined;
});

async function setup(opts: RigOptions = {}): Promise<FaultRig> {
  rig = await new FaultRig(opts).start();
  expect(rig.portsInUse).toBe(0);
  expect(rig.engine.activeSessions).toBe(0);
  return rig;
}

function theLeg(r: FaultRig): FakeLeg {
  expect(r.legs).toHaveLength(1);
  return r.legs[0]!;
}

function answer(r: FaultRig, leg: FakeLeg, callId: string): void {
  leg.fire('provisional', { status: 180, reason: 'Ringing' });
  leg.fire('answered', { sdp: r.answerSdp() });
  expect(r.record(callId).status).toBe('in_call');
  expect(r.engine.activeSessions).toBe(1);
  expect(r.portsInUse).toBe(1);
}

/**
 * The contract after the fault: the record final within a second of it,
 * media, ports, agent link and the dialer's session all let go, and no
 * rejection left unhandled (Node 20 ends the process on one).
 */
async function expectEndedCleanly(
  r: FaultRig,
  callId: string,
  liveAtFault: Partial<FaultSnapshot> = { mediaSessions: 1, portsInUse: 1, liveCalls: 1 },
) {
  await until(() => r.fault !== undefined);
  const fault = r.fault!;
  // what was still held when it threw (so the release below is not vacuous)
  expect(fault).toMatchObject(liveAtFault);
  const deadline = fault.at + 1000;
  while (!isFinal(r.record(callId).status) && Date.now() < deadline) await sleep(5);
  const rec = r.record(callId);
  expect(
    isFinal(rec.status),
    `one second after the fault: status ${rec.status}, media sessions ${r.engine.activeSessions}, ` +
      `ports in use ${r.portsInUse}, live calls ${r.dialer.liveCalls}`,
  ).toBe(true);

  await until(() => r.dialer.liveCalls === 0 && r.engine.activeSessions === 0, 2000).catch(
    () => undefined,
  );
  expect(r.dialer.liveCalls).toBe(0);
  expect(await r.gauge('gateway_calls_live')).toBe(0);
  expect(r.engine.activeSessions).toBe(0);
  expect(await r.gauge('gateway_media_sessions')).toBe(0);
  expect(r.portsInUse).toBe(0);
  expect(await portPairFree(r.sessions[0]!.localPort)).toBe(true);
  expect(r.links).toHaveLength(1);
  expect(r.links[0]!.stops).toBe(1);
  await sleep(20); // a rejection nobody handles is reported after the microtasks drain
  expect(unhandled.map(String)).toEqual([]);
  return r.record(callId);
}

const BEFORE_ANSWER = {
  status: 'failed',
  endCallReason: 'failed_to_connect',
  endDetail: 'session_error',
  active: false,
};
/** At the round's final write the media session is already closed; the session is still live. */
const ENDING = { mediaSessions: 0, portsInUse: 0, liveCalls: 1 };
const AFTER_ANSWER = { status: 'failed_during_call', endDetail: 'session_error', active: false };

describe('a session that throws (dial-path.md)', () => {
  it('the INVITE leaves only once the move to trying is on disk (group-commit.md); a failed fsync ends the call before any INVITE', async () => {
    const r = await setup();
    let releasedAt = 0;
    let invitedAt = 0;
    r.store.unitOfWork.durable = () =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          releasedAt = Date.now();
          resolve();
        }, 200),
      );
    r.invite = (req) => {
      invitedAt = Date.now();
      req.onSending?.();
      const leg = new FakeLeg(req);
      r.legs.push(leg);
      return leg;
    };
    const first = await r.place();
    expect(r.legs, JSON.stringify(r.record(first))).toHaveLength(1);
    expect(releasedAt).toBeGreaterThan(0);
    expect(invitedAt).toBeGreaterThanOrEqual(releasedAt);
    r.legs[0]!.fire('failed', { status: 486, reason: 'Busy Here', headers: {} } as never);
    await until(() => r.dialer.liveCalls === 0);

    r.store.unitOfWork.durable = () => Promise.reject(new Error('EIO'));
    r.clock.advance(3_600_000); // past the duplicate window and the cooldown
    const second = await r.place();
    await until(() => isFinal(r.record(second).status));
    expect(r.legs).toHaveLength(1);
    expect(r.record(second)).toMatchObject({ status: 'failed', active: false });
    await until(() => r.dialer.liveCalls === 0 && r.engine.activeSessions === 0, 2000);
    await sleep(20);
    expect(unhandled.map(String)).toEqual([]);
  });

  it('a throw while building the INVITE (offer SDP) ends the call failed_to_connect, sends nothing and releases media', async () => {
    const r = await setup();
    r.onMediaSession = (s) => {
      s.createOffer = () => {
        throw r.fail(new Error('offer could not be written'));
      };
    };
    const callId = await r.place();
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(BEFORE_ANSWER);
    expect(rec.endAt).toBeDefined();
    expect(r.legs).toHaveLength(0);
  });

  it('signaling.invite throwing synchronously ends the call failed_to_connect with no leg to cancel, and releases media', async () => {
    const r = await setup();
    r.invite = () => {
      throw r.fail(new Error('SIP transport not started'));
    };
    const callId = await r.place();
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(BEFORE_ANSWER);
    expect(r.legs).toHaveLength(0);
  });

  it('a trunk header with CR/LF is refused by the real SIP stack at invite; the call ends failed_to_connect and releases media', async () => {
    const r = await setup({ trunkHeaders: { 'X-Campaign': 'spring\r\nX-Injected: yes' } });
    const stack = createSipStack({ udp: false, tcp: false }); // never started: nothing can leave
    r.invite = (req) => {
      try {
        return stack.invite(req);
      } catch (err) {
        throw r.fail(err);
      }
    };
    const callId = await r.place();
    const rec = await expectEndedCleanly(r, callId);
    // the header reached the stack: buildDialRequest (invite-request.ts) does not refuse CR/LF
    expect(r.fault!.error).toBeInstanceOf(SipStackError);
    expect((r.fault!.error as SipStackError).code).toBe('invalid_header');
    expect(rec).toMatchObject(BEFORE_ANSWER);
  });

  it('a throw in the ringing handler (the ringing write fails) CANCELs the INVITE and ends failed_to_connect', async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    r.failNextWrite((p) => p.status === 'ringing');
    leg.fire('provisional', { status: 180, reason: 'Ringing' });
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(BEFORE_ANSWER);
    expect(leg.cancels).toBe(1);
    expect(leg.byes).toHaveLength(0);
  });

  it('a non-SDP error from applyAnswer at the answer ends the call with session_error (not as an SDP failure) and BYEs', async () => {
    const r = await setup();
    r.onMediaSession = (s) => {
      s.applyAnswer = () => {
        throw r.fail(new TypeError("Cannot read properties of undefined (reading 'port')"));
      };
    };
    const callId = await r.place();
    const leg = theLeg(r);
    leg.fire('provisional', { status: 180, reason: 'Ringing' });
    leg.fire('answered', { sdp: r.answerSdp() });
    const rec = await expectEndedCleanly(r, callId);
    expect(leg.byes).toHaveLength(1);
    expect(leg.cancels).toBe(0);
    expect(rec).toMatchObject(BEFORE_ANSWER);
  });

  it('the in_call write failing at the answer BYEs the answered dialog and ends failed_to_connect', async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    leg.fire('provisional', { status: 180, reason: 'Ringing' });
    r.failNextWrite((p) => p.status === 'in_call');
    leg.fire('answered', { sdp: r.answerSdp() });
    const rec = await expectEndedCleanly(r, callId);
    // the record never said in_call, so it ends as not connected; the dialog did exist: BYE, not CANCEL
    expect(rec).toMatchObject(BEFORE_ANSWER);
    expect(leg.byes).toEqual([{ q850: 41, text: 'session_error' }]);
    expect(leg.cancels).toBe(0);
  });

  it('the agent link throwing on start at the answer ends failed_during_call and BYEs', async () => {
    const r = await setup();
    r.agentStartThrows = true;
    const callId = await r.place();
    const leg = theLeg(r);
    leg.fire('provisional', { status: 180, reason: 'Ringing' });
    leg.fire('answered', { sdp: r.answerSdp() });
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(AFTER_ANSWER);
    expect(rec.startAt).toBeDefined();
    expect(leg.byes).toEqual([{ q850: 41, text: 'session_error' }]);
    expect(leg.cancels).toBe(0);
  });

  it("a mid-call stats write failing (the engine's own stats event) ends failed_during_call and BYEs", async () => {
    const r = await setup({ media: { statsIntervalMs: 20 } });
    const callId = await r.place();
    const leg = theLeg(r);
    answer(r, leg, callId);
    r.clock.advance(31_000); // past the 30 s between networkQuality writes
    r.failNextWrite((p) => p.networkQuality !== undefined && p.status === undefined);
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(AFTER_ANSWER);
    expect(leg.byes).toEqual([{ q850: 41, text: 'session_error' }]);
    expect(leg.cancels).toBe(0);
  });

  it('the agent link throwing on a DTMF digit mid-call ends failed_during_call and BYEs', async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    answer(r, leg, callId);
    r.agentDtmfThrows = true;
    leg.fire('dtmf', { digit: '5', durationMs: 100 });
    const rec = await expectEndedCleanly(r, callId);
    expect(rec).toMatchObject(AFTER_ANSWER);
    expect(leg.byes).toEqual([{ q850: 41, text: 'session_error' }]);
    expect(leg.cancels).toBe(0);
  });

  it("the round's closing write failing once after a busy reply (it carries the callee's settled participant): the record still ends, media released", async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    leg.fire('provisional', { status: 180, reason: 'Ringing' });
    let failed: CallPatch | undefined;
    r.failNextWrite((p) => {
      const closing = p.status !== undefined && p.participants !== undefined;
      if (closing) failed = p;
      return closing;
    });
    leg.fire('failed', { status: 486, reason: 'Busy Here', q850: 17, cause: 'response' });
    // the 486 ended the INVITE transaction: there is nothing left to CANCEL
    const rec = await expectEndedCleanly(r, callId, ENDING);
    // the write that failed was the one carrying the settled participant and the attempt's end
    expect(failed?.participants?.find((p) => p.type === 'trunk')?.status).toBe('rejected');
    expect(failed?.attempts?.[0]).toMatchObject({
      endedAt: expect.any(String),
      sipFailure: expect.anything(),
    });
    expect(rec).toMatchObject({ ...BEFORE_ANSWER, endCallReason: expect.any(String) });
    expect(leg.cancels).toBe(0);
  });

  it('the final write failing once after the callee hung up: the record still ends (failed_during_call / session_error), no BYE of ours, media released', async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    answer(r, leg, callId);
    r.clock.advance(90_000);
    r.failNextWrite((p) => p.status === 'answered');
    leg.fire('ended', { by: 'remote' });
    // the attempt closes its media before the round's final write: nothing media is held then
    const rec = await expectEndedCleanly(r, callId, ENDING);
    // What the record shows: not `answered / caller_hungup` (that write is the one that
    // failed) but the session-error end. The answer time stays; the round's closing
    // figures (duration, cost, networkQuality) were in the rolled-back unit of work, and
    // so was the plan charge: a 90 s call is left uncharged (reported, not asserted).
    expect(rec).toMatchObject({ ...AFTER_ANSWER, endCallReason: 'voip_phone_service_failed' });
    expect(rec.startAt).toBeDefined();
    expect(rec.duration).toBeUndefined();
    expect(rec.totalCost).toBe(0);
    expect(leg.byes).toHaveLength(0); // the far end's BYE ended the dialog
    expect(leg.cancels).toBe(0);
  });

  it('the final write failing once after our BYE (agent hangup): exactly one BYE, record failed_during_call / session_error, media released', async () => {
    const r = await setup();
    const callId = await r.place();
    const leg = theLeg(r);
    answer(r, leg, callId);
    r.clock.advance(90_000);
    r.failNextWrite((p) => p.status === 'answered');
    r.links[0]!.hooks!.hangup('user_hungup');
    const rec = await expectEndedCleanly(r, callId, ENDING);
    expect(rec).toMatchObject(AFTER_ANSWER);
    expect(leg.byes).toEqual([undefined]); // the hangup's BYE, none more for the session error
    expect(leg.cancels).toBe(0);
  });
});
