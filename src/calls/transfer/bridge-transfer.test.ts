// Issue 24 item 3: transfer by bridging, the fallback of a refused REFER
// (fallbackToBridge). The domain with scripted SIP legs (fake-leg.ts) and
// fake media legs that keep what is enqueued on them: the target dialed
// through the trunk as a second leg, the audio relayed both ways once it
// answers (the agent cut off), either party's hangup ending the other, and
// every failure path letting go of the target's leg and media.
import { describe, expect, it, vi } from 'vitest';
import type { CallService } from '../call-service.js';
import type { FakeLeg } from '../session/test-support/fake-leg.js';
import {
  answerCall,
  type FakeMedia,
  useTwoLegWorld,
} from '../session/test-support/transfer-rig.js';

const w = useTwoLegWorld();
const TARGET = '+14155550123';

async function answeredCall(calls: CallService): Promise<{ callId: string; leg: FakeLeg }> {
  const answered = await answerCall(w, calls);
  answered.leg.referScript = {
    outcome: { kind: 'refused', status: 405, reason: 'Method Not Allowed' },
  };
  return answered;
}

/** Asks for the transfer with fallbackToBridge; the target's leg once it is dialed. */
async function bridgeAsked(
  calls: CallService,
  callId: string,
  extra: Record<string, unknown> = {},
) {
  const result = calls.transfer(w.companyId, callId, {
    destination: TARGET,
    fallbackToBridge: true,
    ...extra,
  });
  await vi.advanceTimersByTimeAsync(0);
  expect(w.legs).toHaveLength(2);
  return { result, target: w.legs[1]! };
}

describe('transfer by bridging (fallbackToBridge after a refused REFER)', () => {
  it('REFER 405 → the target dialed through the trunk, answers, audio relayed both ways; the callee hangs up → the target BYEd, both media closed, transferred', async () => {
    const calls = w.makeCalls();
    const { callId, leg } = await answeredCall(calls);
    const { result, target } = await bridgeAsked(calls, callId);
    expect(target.request.requestUri).toBe(`sip:${TARGET}@carrier.example:5060`);
    expect(target.request.from.uri).toBe('sip:+12125550100@carrier.example');
    expect(w.record(callId).status).toBe('transferring');
    expect(w.record(callId).transferringDetails).toMatchObject({
      via: 'bridge',
      referRefusedStatus: 405,
      transferringStatus: 'transferring',
    });
    const [calleeMedia, targetMedia] = w.medias as [FakeMedia, FakeMedia];
    // Before the answer the agent still hears the callee.
    calleeMedia.receive([1, 2, 3]);
    expect(w.agent.heard).toHaveLength(1);
    target.fire('provisional', { status: 180, reason: 'Ringing' });
    target.fire('answered', { sdp: 'v=0 target answer' });
    await expect(result).resolves.toMatchObject({
      transferringStatus: 'success',
      via: 'bridge',
      sipStatus: 200,
    });
    // Relayed both ways; the agent neither hears nor is heard.
    calleeMedia.receive([0x7f, 0x7e]);
    targetMedia.receive([0x11, 0x12, 0x13]);
    targetMedia.receive([0x14]);
    expect(targetMedia.enqueued.map((b) => [...b])).toEqual([[0x7f, 0x7e]]);
    expect(calleeMedia.enqueued.map((b) => [...b])).toEqual([[0x11, 0x12, 0x13], [0x14]]);
    expect(w.agent.heard).toHaveLength(1);
    expect(w.agent.media!.enqueue(new Uint8Array(160))).toBe(0);
    expect(calleeMedia.enqueued).toHaveLength(2);
    const live = w.record(callId);
    expect(live.status).toBe('transferring');
    expect(live.transferringDetails).toMatchObject({
      transferringStatus: 'success',
      callDestinationCallId: target.callId,
      inviteSentAt: expect.any(String),
    });
    expect(w.agent.told.map((e) => e.status)).toEqual(['transferring', 'success']);
    // Callee hangs up.
    w.clock.advance(10_000);
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(target.byes).toHaveLength(1);
    expect(leg.byes).toHaveLength(0);
    expect(calleeMedia.closed).toBe(1);
    expect(targetMedia.closed).toBe(1);
    const r = w.record(callId);
    expect(r).toMatchObject({
      status: 'transferred',
      endCallReason: 'call_transferred',
      active: false,
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', via: 'bridge', sipStatus: 200 }),
    ]);
    expect(r.participants.find((p) => p.type === 'transfer')).toMatchObject({
      status: 'left',
      phoneNumber: TARGET,
      joinedAt: expect.any(String),
      leftAt: expect.any(String),
      networkQuality: expect.objectContaining({ packetsReceived: 2 }),
    });
  });

  it('bridged, the target hangs up → the callee BYEd, both media closed, transferred', async () => {
    const calls = w.makeCalls();
    const { callId, leg } = await answeredCall(calls);
    const { result, target } = await bridgeAsked(calls, callId);
    target.fire('answered', { sdp: 'v=0 target answer' });
    await result;
    target.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.byes).toHaveLength(1);
    expect(target.byes).toHaveLength(0);
    expect(w.medias.map((m) => m.closed)).toEqual([1, 1]);
    expect(w.record(callId)).toMatchObject({
      status: 'transferred',
      endCallReason: 'call_transferred',
    });
    expect(w.record(callId).participants.find((p) => p.type === 'transfer')?.status).toBe('left');
  });

  it('the target is busy (486): its media closed, the agent back with the callee (in_call), the attempt failed 486', async () => {
    const calls = w.makeCalls();
    const { callId, leg } = await answeredCall(calls);
    const { result, target } = await bridgeAsked(calls, callId);
    target.fire('failed', { status: 486, reason: 'Busy Here', cause: 'response' });
    await expect(result).resolves.toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'bridge_failed',
      sipStatus: 486,
      via: 'bridge',
    });
    await vi.advanceTimersByTimeAsync(0);
    const [calleeMedia, targetMedia] = w.medias as [FakeMedia, FakeMedia];
    expect(targetMedia.closed).toBe(1);
    expect(calleeMedia.closed).toBe(0);
    const r = w.record(callId);
    expect(r.status).toBe('in_call');
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'failed',
        transferFailedReason: 'bridge_failed',
        sipStatus: 486,
        via: 'bridge',
      }),
    ]);
    expect(r.participants.find((p) => p.type === 'transfer')?.status).toBe('rejected');
    expect(w.agent.told.at(-1)).toMatchObject({
      status: 'failed',
      reason: 'bridge_failed',
      sipStatus: 486,
    });
    // The agent hears the callee again.
    calleeMedia.receive([1]);
    expect(w.agent.heard).toHaveLength(1);
    expect(w.agent.media!.enqueue(new Uint8Array(8))).toBe(1);
    // The call ends normally afterwards.
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.record(callId)).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    expect(target.byes).toHaveLength(0);
    expect(target.cancels).toBe(0);
  });

  it('the target does not answer within secondsToWaitForCallerToAnswer: CANCEL, failed, its media closed, in_call', async () => {
    const calls = w.makeCalls();
    const { callId } = await answeredCall(calls);
    const { result, target } = await bridgeAsked(calls, callId, {
      secondsToWaitForCallerToAnswer: 5,
    });
    target.fire('provisional', { status: 180, reason: 'Ringing' });
    await vi.advanceTimersByTimeAsync(4_900);
    expect(target.cancels).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(target.cancels).toBe(1);
    await expect(result).resolves.toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'bridge_failed',
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.medias[1]!.closed).toBe(1);
    const r = w.record(callId);
    expect(r.status).toBe('in_call');
    expect(r.participants.find((p) => p.type === 'transfer')?.status).toBe('no_answer');
    expect(w.agent.told.at(-1)).toMatchObject({ status: 'failed', reason: 'bridge_failed' });
  });

  it('the callee hangs up while the target rings: the target CANCELled, its media closed, the attempt aborted', async () => {
    const calls = w.makeCalls();
    const { callId, leg } = await answeredCall(calls);
    const { result, target } = await bridgeAsked(calls, callId);
    target.fire('provisional', { status: 180, reason: 'Ringing' });
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    await expect(result).resolves.toMatchObject({ transferringStatus: 'aborted' });
    expect(target.cancels).toBe(1);
    expect(w.medias.map((m) => m.closed)).toEqual([1, 1]);
    expect(w.record(callId)).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
  });

  it('without fallbackToBridge a refused REFER dials nothing (failed refer_refused)', async () => {
    const calls = w.makeCalls();
    const { callId } = await answeredCall(calls);
    const result = await calls.transfer(w.companyId, callId, { destination: TARGET });
    expect(result).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'refer_refused',
    });
    expect(w.legs).toHaveLength(1);
    expect(w.medias).toHaveLength(1);
  });
});
