// Issue 24 item 4: warm and attended transfer by a consult leg. The domain
// with scripted SIP legs and fake media legs that keep what is enqueued on
// them: the callee held while the target rings, the agent talking to the
// target once it answers (and back to the callee on swap), merge bridging
// callee ⇄ target, cancel and every failure bringing the agent back to the
// callee, and no leg or media session left behind on any path.
import { describe, expect, it, vi } from 'vitest';
import type { CallService } from '../call-service.js';
import type { FakeLeg } from '../session/test-support/fake-leg.js';
import { trunkFixture } from '../../model/test-support/entity-fixtures.js';
import {
  answerCall,
  type FakeMedia,
  useTwoLegWorld,
} from '../session/test-support/transfer-rig.js';

const w = useTwoLegWorld();
const TARGET = '+14155550123';
const WHISPER = 'Caller asks about a refund on order 1234';

/** An answered call, then a warm transfer asked by the agent; the target's leg once dialed. */
async function consultAsked(calls: CallService, extra: Record<string, unknown> = {}) {
  const answered = await answerCall(w, calls);
  w.agent.hooks!.transfer({
    destination: TARGET,
    transferMode: 'warm',
    messageToPersonWantingToBeTransferred: WHISPER,
    ...extra,
  });
  await vi.advanceTimersByTimeAsync(0);
  expect(w.legs).toHaveLength(2);
  const [calleeMedia, targetMedia] = w.medias as [FakeMedia, FakeMedia];
  return { ...answered, target: w.legs[1]!, calleeMedia, targetMedia };
}

/** The consult leg answers: the agent talks to the target. */
async function targetAnswers(target: FakeLeg): Promise<void> {
  target.fire('answered', { sdp: 'v=0 target answer' });
  await vi.advanceTimersByTimeAsync(0);
}

/** The target's leg reports its confirmed dialog, as a SIP engine does before `answered`. */
function confirmDialog(target: FakeLeg, callId: string, localTag: string, remoteTag: string) {
  target.request.onDialog?.({
    callId,
    localTag,
    remoteTag,
    localParty: '',
    remoteParty: '',
    remoteTarget: '',
    routeSet: [],
    localSeq: 1,
    transport: 'udp',
    destination: { host: '127.0.0.1', port: 5060 },
  });
}

const enqueued = (m: FakeMedia) => m.enqueued.map((b) => [...b]);

describe('warm transfer by a consult leg', () => {
  it('the callee held while the target rings; the agent consults the target, swaps back and forth, merges: callee ⇄ target bridged, DTMF relayed; the target hangs up → transferred', async () => {
    const calls = w.makeCalls();
    const { callId, leg, target, calleeMedia, targetMedia } = await consultAsked(calls);
    expect(target.request.requestUri).toBe(`sip:${TARGET}@carrier.example:5060`);
    expect(w.record(callId).status).toBe('transferring');
    expect(w.record(callId).transferringDetails).toMatchObject({
      transferMode: 'warm',
      consultPhase: 'consulting_ringing',
      via: 'bridge',
      transferringStatus: 'transferring',
      messageToPersonWantingToBeTransferred: WHISPER,
    });
    // Held: the agent hears nothing from the callee and its audio goes nowhere.
    calleeMedia.receive([1]);
    expect(w.agent.heard).toEqual([]);
    expect(w.agent.media!.enqueue(new Uint8Array([9]))).toBe(0);
    target.fire('provisional', { status: 180, reason: 'Ringing' });
    expect(w.record(callId).participants.at(-1)).toMatchObject({
      type: 'transfer',
      status: 'ringing',
    });

    await targetAnswers(target);
    expect(w.agent.told.map((e) => [e.status, e.consultPhase])).toEqual([
      ['transferring', undefined],
      ['pending_confirmation', 'consulting_dest'],
    ]);
    expect(w.agent.told[1]).toMatchObject({
      messageToPersonWantingToBeTransferred: WHISPER,
      sipStatus: 200,
    });
    expect(w.record(callId).transferringDetails).toMatchObject({
      transferringStatus: 'pending_confirmation',
      consultPhase: 'consulting_dest',
      callDestinationCallId: target.callId,
    });
    expect(w.record(callId).participants.at(-1)).toMatchObject({ status: 'joined' });
    // The agent talks to the target; the callee hears nothing.
    targetMedia.receive([2]);
    calleeMedia.receive([3]);
    w.agent.media!.enqueue(new Uint8Array([4]));
    expect(w.agent.heard).toEqual([2]);
    expect(enqueued(targetMedia)).toEqual([[4]]);
    expect(enqueued(calleeMedia)).toEqual([]);

    w.agent.hooks!.consult!('swap');
    await vi.advanceTimersByTimeAsync(0);
    expect(w.record(callId).transferringDetails?.consultPhase).toBe('back_with_caller');
    calleeMedia.receive([5]);
    targetMedia.receive([6]);
    w.agent.media!.enqueue(new Uint8Array([7]));
    expect(w.agent.heard).toEqual([2, 5]);
    expect(enqueued(calleeMedia)).toEqual([[7]]);
    calleeMedia.emit('dtmf', { digit: '1' });
    expect(w.agent.digits).toEqual(['1']);

    w.agent.hooks!.consult!('merge');
    await vi.advanceTimersByTimeAsync(0);
    expect(w.agent.told.map((e) => [e.status, e.consultPhase]).slice(2)).toEqual([
      ['pending_confirmation', 'back_with_caller'],
      ['success', 'merged'],
    ]);
    // Bridged: relayed both ways, digits regenerated on the other leg, the agent out.
    const sent: string[] = [];
    targetMedia.sendDtmf = (d: string) => void sent.push(d);
    calleeMedia.receive([8]);
    targetMedia.receive([9]);
    calleeMedia.emit('dtmf', { digit: '#' });
    expect(enqueued(targetMedia)).toEqual([[4], [8]]);
    expect(enqueued(calleeMedia)).toEqual([[7], [9]]);
    expect(sent).toEqual(['#']);
    expect(w.agent.heard).toEqual([2, 5]);
    expect(w.agent.digits).toEqual(['1']);
    expect(w.agent.media!.enqueue(new Uint8Array([1]))).toBe(0);
    expect(w.record(callId)).toMatchObject({ status: 'transferring' });
    expect(w.record(callId).transferringDetails).toMatchObject({
      transferringStatus: 'success',
      consultPhase: 'merged',
    });

    w.clock.advance(5000);
    target.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.byes).toHaveLength(1);
    expect(w.medias.map((m) => m.closed)).toEqual([1, 1]);
    const r = w.record(callId);
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'success',
        transferMode: 'warm',
        consultPhase: 'merged',
        via: 'bridge',
        requestedBy: 'agent',
      }),
    ]);
    expect(r.participants.find((p) => p.type === 'transfer')).toMatchObject({
      status: 'left',
      leftAt: expect.any(String),
    });
  });

  it('cancel (by the API) during the consult: the target BYEd and its media closed, the agent back with the callee, in_call, the attempt aborted / cancelled', async () => {
    const calls = w.makeCalls();
    const { callId, target, calleeMedia, targetMedia } = await consultAsked(calls, {
      transferMode: 'attended',
    });
    await targetAnswers(target);
    const result = await calls.consult(w.companyId, callId, 'cancel');
    expect(result).toMatchObject({ transferringStatus: 'aborted', consultPhase: 'cancelled' });
    expect(target.byes).toHaveLength(1);
    expect(targetMedia.closed).toBe(1);
    calleeMedia.receive([1]);
    w.agent.media!.enqueue(new Uint8Array([2]));
    expect(w.agent.heard).toEqual([1]);
    expect(enqueued(calleeMedia)).toEqual([[2]]);
    const r = w.record(callId);
    expect(r.status).toBe('in_call');
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'aborted',
      transferFailedReason: 'cancelled',
      consultPhase: 'cancelled',
      transferMode: 'attended',
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'aborted', transferFailedReason: 'cancelled' }),
    ]);
    expect(r.participants.at(-1)).toMatchObject({ type: 'transfer', status: 'left' });
    expect(w.agent.told.at(-1)).toMatchObject({ status: 'aborted', reason: 'cancelled' });
    // Nothing left to merge; a new transfer may start.
    await expect(calls.consult(w.companyId, callId, 'merge')).rejects.toMatchObject({
      code: 'no_consult_in_progress',
    });
    const again = calls.transfer(w.companyId, callId, {
      destination: TARGET,
      transferMode: 'warm',
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.legs).toHaveLength(3);
    w.legs[2]!.fire('failed', {
      status: 480,
      reason: 'Temporarily Unavailable',
      cause: 'response',
    });
    await expect(again).resolves.toMatchObject({ transferFailedReason: 'consult_failed' });
  });

  it('the target is busy (486): the agent back with the callee, in_call, the attempt failed / consult_failed 486, the target rejected, its media closed', async () => {
    const calls = w.makeCalls();
    const { callId, target, calleeMedia, targetMedia } = await consultAsked(calls);
    target.fire('failed', { status: 486, reason: 'Busy Here', cause: 'response' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(targetMedia.closed).toBe(1);
    calleeMedia.receive([1]);
    expect(w.agent.heard).toEqual([1]);
    const r = w.record(callId);
    expect(r.status).toBe('in_call');
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'failed',
        transferFailedReason: 'consult_failed',
        sipStatus: 486,
        consultPhase: 'back_with_caller',
      }),
    ]);
    expect(r.participants.at(-1)).toMatchObject({ type: 'transfer', status: 'rejected' });
    expect(w.agent.told.map((e) => e.status)).toEqual(['transferring', 'failed']);
  });

  it('the target does not answer in time: CANCEL, the agent back with the callee, the target no_answer', async () => {
    const calls = w.makeCalls();
    const { callId, target, targetMedia } = await consultAsked(calls, {
      secondsToWaitForCallerToAnswer: 5,
    });
    await vi.advanceTimersByTimeAsync(5000);
    await vi.advanceTimersByTimeAsync(0);
    expect(target.cancelled).toBe(true);
    expect(targetMedia.closed).toBe(1);
    expect(w.record(callId).status).toBe('in_call');
    expect(w.record(callId).participants.at(-1)).toMatchObject({ status: 'no_answer' });
  });

  it('the target hangs up during the consult: the agent back with the callee, failed / target_hung_up', async () => {
    const calls = w.makeCalls();
    const { callId, target, calleeMedia, targetMedia } = await consultAsked(calls);
    await targetAnswers(target);
    target.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(targetMedia.closed).toBe(1);
    calleeMedia.receive([1]);
    expect(w.agent.heard).toEqual([1]);
    expect(w.record(callId)).toMatchObject({ status: 'in_call' });
    expect(w.record(callId).transferAttempts?.[0]).toMatchObject({
      status: 'failed',
      transferFailedReason: 'target_hung_up',
      consultPhase: 'back_with_caller',
    });
    expect(w.record(callId).participants.at(-1)).toMatchObject({ status: 'left' });
  });

  it('no RTP from the target: during the consult it is BYEd and the agent is back with the callee; once merged the call ends transferred', async () => {
    const calls = w.makeCalls();
    const first = await consultAsked(calls);
    await targetAnswers(first.target);
    first.targetMedia.emit('inactive', { silentForMs: 30_000 });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(first.target.byes).toHaveLength(1);
    expect(first.targetMedia.closed).toBe(1);
    expect(w.record(first.callId)).toMatchObject({ status: 'in_call' });
    expect(w.record(first.callId).transferAttempts?.[0]).toMatchObject({
      transferFailedReason: 'target_hung_up',
    });

    void calls.transfer(w.companyId, first.callId, { destination: TARGET, transferMode: 'warm' });
    await vi.advanceTimersByTimeAsync(0);
    const second = w.legs[2]!;
    await targetAnswers(second);
    await calls.consult(w.companyId, first.callId, 'merge');
    w.medias[2]!.emit('inactive', { silentForMs: 30_000 });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(second.byes).toHaveLength(1);
    expect(first.leg.byes).toHaveLength(1);
    expect(w.record(first.callId)).toMatchObject({
      status: 'transferred',
      endCallReason: 'call_transferred',
    });
  });

  it('the callee hangs up during the consult: the target BYEd, both media closed, the call ends completed with the attempt aborted', async () => {
    const calls = w.makeCalls();
    const { callId, leg, target } = await consultAsked(calls);
    await targetAnswers(target);
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(target.byes).toHaveLength(1);
    expect(w.medias.map((m) => m.closed)).toEqual([1, 1]);
    const r = w.record(callId);
    expect(r.active).toBe(false);
    expect(r.status).not.toBe('transferred');
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'aborted', transferFailedReason: 'call_ended' }),
    ]);
    expect(r.participants.at(-1)).toMatchObject({ type: 'transfer', status: 'left' });
  });

  it('attended, merge: bridged at once, then a REFER with Replaces naming our dialog with the target; NOTIFY 200 → both our legs BYEd, transferred via refer', async () => {
    const calls = w.makeCalls();
    const { callId, leg, target } = await consultAsked(calls, { transferMode: 'attended' });
    confirmDialog(target, 'b2@gw', 'ours', 'theirs');
    await targetAnswers(target);
    leg.referScript = {
      progress: [{ status: 100, reason: 'Trying' }],
      outcome: { kind: 'transferred', status: 200, reason: 'OK' },
    };
    await calls.consult(w.companyId, callId, 'merge');
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.refers.map((r) => r.request)).toEqual([
      {
        referTo: `sip:${TARGET}@carrier.example:5060?Replaces=b2%40gw%3Bto-tag%3Dtheirs%3Bfrom-tag%3Dours`,
        referredBy: '<sip:+12125550100@carrier.example>',
      },
    ]);
    expect(leg.byes).toHaveLength(1);
    expect(target.byes).toHaveLength(1);
    const r = w.record(callId);
    expect(r).toMatchObject({ status: 'transferred', endCallReason: 'call_transferred' });
    expect(r.transferringDetails).toMatchObject({
      transferMode: 'attended',
      transferringStatus: 'success',
      consultPhase: 'merged',
      via: 'refer',
      referTo: expect.stringContaining('?Replaces='),
      referAcceptedAt: expect.any(String),
      sipStatus: 200,
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({ status: 'success', via: 'refer', consultPhase: 'merged' }),
    ]);
  });

  it('attended, merge: the callee refuses the REFER with Replaces (405) → the gateway keeps the bridge (referRefusedStatus 405)', async () => {
    const calls = w.makeCalls();
    const { callId, leg, target, calleeMedia, targetMedia } = await consultAsked(calls, {
      transferMode: 'attended',
    });
    confirmDialog(target, 'b3@gw', 'a', 'b');
    await targetAnswers(target);
    leg.referScript = { outcome: { kind: 'refused', status: 405, reason: 'Method Not Allowed' } };
    await calls.consult(w.companyId, callId, 'merge');
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.refers).toHaveLength(1);
    expect(leg.byes).toHaveLength(0);
    calleeMedia.receive([0x31]);
    expect(enqueued(targetMedia).at(-1)).toEqual([0x31]);
    const r = w.record(callId);
    expect(r.status).toBe('transferring');
    expect(r.transferringDetails).toMatchObject({
      transferringStatus: 'success',
      via: 'bridge',
      referRefusedStatus: 405,
      consultPhase: 'merged',
    });
  });

  it('an outbound route matches the target: dialed through its trunk with a caller ID it may present; routedVia, outboundRouteId, outboundTrunkId on the details', async () => {
    const createdAt = new Date(w.clock.now()).toISOString();
    w.store.sipTrunks.insert(
      trunkFixture({
        id: 'pbx',
        companyId: w.companyId,
        createdAt,
        host: 'pbx.example',
        isDefault: false,
        defaultCallerId: '+12125550199',
        callerIds: ['+12125550199'],
      }),
    );
    w.store.outboundRoutes.insert({
      id: 'r415',
      companyId: w.companyId,
      createdAt,
      modifiedAt: createdAt,
      name: 'desk',
      prefix: '+1415',
      sipTrunkId: 'pbx',
      priority: 1,
    });
    const calls = w.makeCalls();
    const { callId, target } = await consultAsked(calls);
    expect(target.request.requestUri).toBe(`sip:${TARGET}@pbx.example:5060`);
    expect(target.request.from.uri).toBe('sip:+12125550199@pbx.example');
    await targetAnswers(target);
    expect(w.record(callId).transferringDetails).toMatchObject({
      outboundTrunkId: 'pbx',
      routedVia: 'outbound_route',
      outboundRouteId: 'r415',
      inviteSentAt: expect.any(String),
    });
  });

  it('the target takes a channel of the plan: with every channel in use the consult fails no_channels_available, nothing dialed; with one free, a new call is refused while the target holds it', async () => {
    const plan = w.store.companies.getPlan(w.companyId)!;
    w.store.companies.savePlan({ ...plan, maxChannels: 1 });
    const calls = w.makeCalls();
    const answered = await answerCall(w, calls);
    await expect(
      calls.transfer(w.companyId, answered.callId, { destination: TARGET, transferMode: 'warm' }),
    ).resolves.toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'consult_failed',
      sipReason: 'no_channels_available',
    });
    expect(w.legs).toHaveLength(1);
    expect(w.record(answered.callId).status).toBe('in_call');

    w.store.companies.savePlan({ ...plan, maxChannels: 2 });
    void calls.transfer(w.companyId, answered.callId, {
      destination: TARGET,
      transferMode: 'warm',
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(w.legs).toHaveLength(2);
    const who = { company: w.store.companies.get(w.companyId)!, key: { id: 'k', name: 'key' } };
    await expect(
      calls.initiate(who, { destinationNumber: '+12125550142', agentId: w.agentId }),
    ).rejects.toMatchObject({ code: 'no_channels_available' });
    await calls.consult(w.companyId, answered.callId, 'cancel');
    await expect(
      calls.initiate(who, { destinationNumber: '+12125550142', agentId: w.agentId }),
    ).resolves.toMatchObject({ callId: expect.any(String) });
  });

  it('merge, swap or cancel when they cannot apply: no_consult_in_progress; cancel while ringing CANCELs the target', async () => {
    const calls = w.makeCalls();
    const { callId, target, targetMedia } = await consultAsked(calls);
    await expect(calls.consult(w.companyId, callId, 'merge')).rejects.toMatchObject({
      code: 'no_consult_in_progress',
    });
    w.agent.hooks!.consult!('swap');
    await vi.advanceTimersByTimeAsync(0);
    expect(w.agent.told.at(-1)).toMatchObject({
      status: 'failed',
      reason: 'no_consult_in_progress',
    });
    await calls.consult(w.companyId, callId, 'cancel');
    await vi.advanceTimersByTimeAsync(0);
    expect(target.cancelled).toBe(true);
    expect(targetMedia.closed).toBe(1);
    expect(w.record(callId).status).toBe('in_call');
    expect(w.record(callId).participants.at(-1)).toMatchObject({ status: 'cancelled' });
    // A second transfer while one is under way is refused.
    void calls.transfer(w.companyId, callId, { destination: TARGET, transferMode: 'warm' });
    await vi.advanceTimersByTimeAsync(0);
    await expect(
      calls.transfer(w.companyId, callId, { destination: TARGET, transferMode: 'warm' }),
    ).rejects.toMatchObject({ code: 'transfer_in_progress' });
  });
});
