// Issue 24: a blind transfer by REFER, in the domain, with a scripted SIP leg
// (fake-leg.ts), a fake agent link that records what the agent is told, and
// the real store: every path of the outcome, what the record keeps, the
// refusals before any REFER.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import { CallError } from '../call-error.js';
import type { CallService } from '../call-service.js';
import type { Dialer } from '../dialer.js';
import type { AgentLink, AgentLinkHooks, TransferProgressEvent } from '../ports/agent-link.js';
import type { FakeLeg } from '../session/test-support/fake-leg.js';
import {
  answerCall,
  fakeMediaPort,
  freshWorld,
  legSignaling,
  makeDialerAndCalls,
} from '../session/test-support/transfer-rig.js';

let store: Store;
let clock: ManualClock;
let legs: FakeLeg[];
let companyId: string;
let agentId: string;
/** What the agent was told, and its hooks into the session. */
let told: TransferProgressEvent[];
let agentHooks: AgentLinkHooks | undefined;
let agentStopped: number;

const signaling = legSignaling((leg) => legs.push(leg));
const media = fakeMediaPort();

/** The dialer behind the last makeCalls(). */
let dialer: Dialer;

function makeCalls(): CallService {
  const made = makeDialerAndCalls({
    store,
    clock,
    signaling,
    media,
    agents: () => {
      const link: AgentLink = {
        connect: async () => undefined,
        start: (_media, hooks) => (agentHooks = hooks),
        dtmf: () => undefined,
        transferStatus: (e) => told.push(e),
        stop: async () => {
          agentStopped++;
        },
      };
      return link;
    },
  });
  dialer = made.dialer;
  return made.calls;
}

beforeEach(() => {
  vi.useFakeTimers();
  ({ store, clock, companyId, agentId } = freshWorld());
  legs = [];
  told = [];
  agentHooks = undefined;
  agentStopped = 0;
});
afterEach(() => vi.useRealTimers());

const who = () => ({ company: store.companies.get(companyId)!, key: { id: 'k', name: 'key' } });
const record = (callId: string) => store.calls.get(companyId, callId)!;

const answeredCall = (calls: CallService) =>
  answerCall({ store, clock, legs, companyId, agentId }, calls);

const TARGET = '+14155550123';

describe('blind transfer by REFER', () => {
  it('transferred: REFER to the number at the trunk, BYE from us, transferred / call_transferred, the story on the record', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    leg.referScript = {
      progress: [
        { status: 100, reason: 'Trying' },
        { status: 180, reason: 'Ringing' },
      ],
      outcome: { kind: 'transferred', status: 200, reason: 'OK' },
    };
    clock.advance(5000);
    const result = await calls.transfer(companyId, callId, {
      destination: TARGET,
      transferReason: 'billing question',
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(result).toEqual({
      transferringStatus: 'success',
      transferMode: 'blind',
      destination: TARGET,
      referTo: `sip:${TARGET}@carrier.example:5060`,
      sipStatus: 200,
      sipReason: 'OK',
    });
    expect(leg.refers).toEqual([
      {
        request: {
          referTo: `sip:${TARGET}@carrier.example:5060`,
          referredBy: '<sip:+12125550100@carrier.example>',
        },
      },
    ]);
    expect(leg.byes).toHaveLength(1);
    const r = record(callId);
    expect(r).toMatchObject({
      status: 'transferred',
      endCallReason: 'call_transferred',
      active: false,
      duration: 5,
    });
    expect(r.transferringDetails).toMatchObject({
      callSourceId: r.id,
      callSourceCallId: leg.callId,
      transferringStatus: 'success',
      callerId: '+12125550100',
      destinationType: 'External',
      destinationNumber: TARGET,
      transferMode: 'blind',
      transferReason: 'billing question',
      showCallerId: true,
      outboundTrunkId: 't1',
      referTo: `sip:${TARGET}@carrier.example:5060`,
      requestedBy: 'api',
      referAcceptedAt: expect.any(String),
      endedAt: expect.any(String),
      sipStatus: 200,
    });
    expect(r.transferAttempts).toEqual([
      expect.objectContaining({
        status: 'success',
        destinationNumber: TARGET,
        transferMode: 'blind',
        requestedBy: 'api',
        sipStatus: 200,
        startedAt: expect.any(String),
        endedAt: expect.any(String),
        at: expect.any(String),
      }),
    ]);
    expect(r.participants.find((p) => p.type === 'transfer')).toMatchObject({
      role: 'User',
      status: 'joined',
      phoneNumber: TARGET,
      joinedAt: expect.any(String),
    });
    expect(store.calls.events(r.id).map((e) => e.status)).toEqual([
      'to_be_processed',
      'trying',
      'ringing',
      'in_call',
      'transferring',
      'transferred',
    ]);
    expect(told.map((e) => [e.status, e.sipStatus])).toEqual([
      ['transferring', undefined],
      ['pending_confirmation', 100],
      ['pending_confirmation', 180],
      ['success', 200],
    ]);
    expect(agentStopped).toBe(1); // stop and close, as on a normal end
  });

  it.each([
    [
      'refused 405',
      { kind: 'refused', status: 405, reason: 'Method Not Allowed' } as const,
      'refer_refused',
      'failed',
    ],
    [
      'failed 486',
      { kind: 'failed', status: 486, reason: 'Busy Here' } as const,
      'transfer_failed',
      'rejected',
    ],
    [
      'no_notify',
      { kind: 'no_notify', status: 0, reason: 'timeout' } as const,
      'no_notify',
      'unreachable',
    ],
  ])(
    '%s: the call stays up with the agent, the attempt failed with the far end’s status',
    async (_name, outcome, reason, participant) => {
      const calls = makeCalls();
      const { callId, leg } = await answeredCall(calls);
      leg.referScript = {
        progress: outcome.kind === 'refused' ? [] : [{ status: 100, reason: 'Trying' }],
        outcome,
      };
      const result = await calls.transfer(companyId, callId, {
        destination: 'sip:desk@pbx.example.com',
        secondsToWaitForCallerToAnswer: 20,
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(result).toMatchObject({ transferringStatus: 'failed', transferFailedReason: reason });
      expect(leg.refers[0]).toEqual({
        request: {
          referTo: 'sip:desk@pbx.example.com',
          referredBy: '<sip:+12125550100@carrier.example>',
        },
        timeoutMs: 20_000,
      });
      expect(leg.byes).toHaveLength(0);
      const r = record(callId);
      expect(r.status).toBe('in_call');
      expect(r.transferringDetails).toMatchObject({
        transferringStatus: 'failed',
        transferFailedReason: reason,
        destinationNumber: 'sip:desk@pbx.example.com',
      });
      expect(r.transferAttempts).toEqual([
        expect.objectContaining({
          status: 'failed',
          transferFailedReason: reason,
          ...(outcome.status ? { sipStatus: outcome.status } : {}),
          sipReason: outcome.reason,
        }),
      ]);
      expect(r.participants.find((p) => p.type === 'transfer')?.status).toBe(participant);
      expect(told.at(-1)).toMatchObject({ status: 'failed', reason });
      // still a call: the far end hangs up later, as usual
      leg.fire('ended', { by: 'remote' });
      await vi.advanceTimersByTimeAsync(0);
      expect(record(callId)).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
      expect(record(callId).transferAttempts).toHaveLength(1);
    },
  );

  it('a second transfer while one is pending: transfer_in_progress; after it fails, another may go', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    leg.referScript = { hold: true };
    const first = calls.transfer(companyId, callId, { destination: TARGET });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId).status).toBe('transferring');
    await expect(calls.transfer(companyId, callId, { destination: TARGET })).rejects.toMatchObject({
      code: 'transfer_in_progress',
    });
    leg.progressRefer({ status: 100, reason: 'Trying' });
    expect(record(callId).transferringDetails?.transferringStatus).toBe('pending_confirmation');
    leg.finishRefer({ kind: 'failed', status: 480, reason: 'Temporarily Unavailable' });
    expect(await first).toMatchObject({ transferringStatus: 'failed', sipStatus: 480 });
    expect(record(callId).status).toBe('in_call');
    leg.referScript = { outcome: { kind: 'transferred', status: 200, reason: 'OK' } };
    expect(await calls.transfer(companyId, callId, { destination: TARGET })).toMatchObject({
      transferringStatus: 'success',
    });
    await vi.advanceTimersByTimeAsync(0);
    const r = record(callId);
    expect(r.status).toBe('transferred');
    expect(r.transferAttempts?.map((a) => a.status)).toEqual(['failed', 'success']);
    expect(r.participants.filter((p) => p.type === 'transfer').map((p) => p.status)).toEqual([
      'no_answer',
      'joined',
    ]);
  });

  it('the callee hangs up during the transfer: aborted, the call ends as a normal hang-up', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    leg.referScript = { hold: true };
    const pending = calls.transfer(companyId, callId, { destination: TARGET });
    await vi.advanceTimersByTimeAsync(0);
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    expect(await pending).toMatchObject({
      transferringStatus: 'aborted',
      transferFailedReason: 'call_ended',
    });
    const r = record(callId);
    expect(r).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
    expect(r.transferringDetails?.transferringStatus).toBe('aborted');
    expect(r.transferAttempts?.map((a) => a.status)).toEqual(['aborted']);
    leg.finishRefer({ kind: 'transferred', status: 200, reason: 'OK' }); // too late: nothing changes
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId).transferAttempts).toHaveLength(1);
  });

  it('shutdown past its grace while a REFER waits: the final record says aborted, never transferring', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    leg.referScript = { hold: true };
    leg.holdBye = true; // the far end never answers our BYE: the drain forces the end
    const pending = calls.transfer(companyId, callId, { destination: TARGET });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId).status).toBe('transferring');
    const drained = dialer.drain(10);
    await vi.advanceTimersByTimeAsync(20);
    await drained;
    const r = record(callId);
    expect(['answered', 'failed_during_call']).toContain(r.status);
    expect(r.transferringDetails?.transferringStatus).toBe('aborted');
    expect(r.transferAttempts?.map((a) => a.status)).toEqual(['aborted']);
    expect(await pending).toMatchObject({ transferringStatus: 'aborted' });
  });

  it('call not live: call_not_live before the answer and after the end; nothing written', async () => {
    const calls = makeCalls();
    const { callId } = await calls.initiate(who(), { destinationNumber: '+12125551234', agentId });
    await vi.advanceTimersByTimeAsync(0);
    await expect(calls.transfer(companyId, callId, { destination: TARGET })).rejects.toMatchObject({
      code: 'call_not_live',
    });
    const leg = legs.at(-1)!;
    leg.fire('failed', { status: 486, reason: 'Busy Here', cause: 'response' });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId).status).toBe('busy');
    await expect(calls.transfer(companyId, callId, { destination: TARGET })).rejects.toMatchObject({
      code: 'call_not_live',
    });
    expect(leg.refers).toEqual([]);
    expect(record(callId).transferringDetails).toBeUndefined();
  });

  it('the destination opted out: callee_opted_out (403), no REFER', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    store.optOuts.save({
      companyId,
      phoneNumber: TARGET,
      permanent: true,
      blockedUntil: null,
      reason: null,
      source: 'api',
      createdAt: new Date(clock.now()).toISOString(),
    });
    const refused = calls.transfer(companyId, callId, { destination: TARGET });
    await expect(refused).rejects.toBeInstanceOf(CallError);
    await expect(refused).rejects.toMatchObject({ code: 'callee_opted_out' });
    // the same number in a SIP URI's user part is the same person
    await expect(
      calls.transfer(companyId, callId, { destination: `sip:${TARGET}@pbx.example.com` }),
    ).rejects.toMatchObject({ code: 'callee_opted_out' });
    expect(leg.refers).toEqual([]);
    expect(record(callId).status).toBe('in_call');
  });

  it('warm / attended to a SIP URI: failed consult_needs_a_number; an engine without REFER: failed not_supported; nothing written', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    const desk = 'sip:desk@pbx.example';
    for (const transferMode of ['warm', 'attended'] as const) {
      expect(await calls.transfer(companyId, callId, { destination: desk, transferMode })).toEqual({
        transferringStatus: 'failed',
        transferMode,
        destination: desk,
        transferFailedReason: 'consult_needs_a_number',
      });
    }
    expect(
      await calls.transfer(companyId, callId, { destination: desk, blindTransfer: false }),
    ).toMatchObject({ transferMode: 'warm', transferFailedReason: 'consult_needs_a_number' });
    leg.refer = undefined;
    expect(await calls.transfer(companyId, callId, { destination: TARGET })).toMatchObject({
      transferringStatus: 'failed',
      transferFailedReason: 'not_supported',
    });
    expect(record(callId).transferAttempts).toBeUndefined();
    expect(record(callId).status).toBe('in_call');
  });

  it('bad requests: invalid_transfer_destination / invalid_transfer_mode', async () => {
    const calls = makeCalls();
    const { callId } = await answeredCall(calls);
    for (const body of [
      { destination: '4155550123' },
      { destination: '+1415', destinationType: 'number' as const },
      { destination: 'desk@pbx', destinationType: 'sip_uri' as const },
    ]) {
      await expect(calls.transfer(companyId, callId, body)).rejects.toMatchObject({
        code: 'invalid_transfer_destination',
      });
    }
    await expect(
      calls.transfer(companyId, callId, {
        destination: TARGET,
        transferMode: 'warm',
        blindTransfer: true,
      }),
    ).rejects.toMatchObject({ code: 'invalid_transfer_mode' });
  });

  it('asked by the agent: showCallerId false sends no Referred-By; refusals come back as failed events', async () => {
    const calls = makeCalls();
    const { callId, leg } = await answeredCall(calls);
    agentHooks!.transfer({ destination: 'sip:desk@pbx.example', transferMode: 'warm' });
    await vi.advanceTimersByTimeAsync(0);
    expect(told).toEqual([
      {
        status: 'failed',
        destination: 'sip:desk@pbx.example',
        transferMode: 'warm',
        reason: 'consult_needs_a_number',
      },
    ]);
    agentHooks!.transfer({ destination: 'nowhere' });
    expect(told.at(-1)).toMatchObject({ status: 'failed', reason: 'invalid_transfer_destination' });
    leg.referScript = { outcome: { kind: 'refused', status: 603, reason: 'Decline' } };
    agentHooks!.transfer({ destination: TARGET, showCallerId: false });
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.refers[0]?.request).toEqual({ referTo: `sip:${TARGET}@carrier.example:5060` });
    expect(told.slice(2).map((e) => e.status)).toEqual(['transferring', 'failed']);
    const r = record(callId);
    expect(r.transferAttempts?.[0]).toMatchObject({ requestedBy: 'agent', sipStatus: 603 });
    expect(r.transferringDetails).toMatchObject({ showCallerId: false, requestedBy: 'agent' });
  });
});
