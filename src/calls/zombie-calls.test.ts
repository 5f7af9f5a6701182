// Issue 23 item 6, "No zombie calls" (docs/decisions/no-zombie-calls.md),
// in the domain under fake timers with a scripted SIP leg and media session:
// the end reason when the SIP stack's session timer ends a call, the far-end
// liveness rule (no RTP and no answer in the dialog), the dialog kept while
// the call is answered, and the BYE recovery sends for it after a crash.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Store } from '../store/store.js';
import type { CallService } from './call-service.js';
import type { Dialer, DialerSettings } from './dialer.js';
import type { DialogSnapshot, SignalingPort } from './ports/signaling-port.js';
import type { FakeLeg } from './session/test-support/fake-leg.js';
import {
  answerCall,
  FakeMedia,
  fakeMediaPort,
  freshWorld,
  legSignaling,
  makeDialerAndCalls,
} from './session/test-support/transfer-rig.js';
import { FarEndLiveness, probeSaysGone } from './session/far-end-liveness.js';

const snapshot = (over: Partial<DialogSnapshot> = {}): DialogSnapshot => ({
  callId: 'sip-call-1@gw',
  localTag: 'ours',
  remoteTag: 'theirs',
  localParty: '<sip:+12125550100@carrier.example>;tag=ours',
  remoteParty: '<sip:+12125551234@carrier.example>;tag=theirs',
  remoteTarget: 'sip:far@192.0.2.7:5060',
  routeSet: ['<sip:edge.carrier.example;lr>'],
  localSeq: 1,
  transport: 'udp',
  destination: { host: '192.0.2.1', port: 5060 },
  ...over,
});

let store: Store;
let clock: ManualClock;
let legs: FakeLeg[];
let medias: FakeMedia[];
let ended: Array<{ dialog: DialogSnapshot; reason?: { q850?: number; text?: string } }>;
let endStatus: number;
let companyId: string;
let agentId: string;

const signaling: SignalingPort = {
  ...legSignaling((leg) => legs.push(leg)),
  endDialog: async (dialog, reason) => {
    ended.push({ dialog, ...(reason ? { reason } : {}) });
    return endStatus;
  },
};
const media = fakeMediaPort(
  (m) => medias.push(m),
  () => new FakeMedia(20000, 1),
);

function makeDialer(
  settings: Partial<DialerSettings> = {},
  port: SignalingPort = signaling,
): { dialer: Dialer; calls: CallService } {
  return makeDialerAndCalls({ store, clock, signaling: port, media, settings });
}

beforeEach(() => {
  vi.useFakeTimers();
  ({ store, clock, companyId, agentId } = freshWorld({ websocketUrl: 'ws://x' }));
  legs = [];
  medias = [];
  ended = [];
  endStatus = 200;
});
afterEach(() => vi.useRealTimers());

const record = (callId: string) => store.calls.get(companyId, callId)!;

const answeredCall = (calls: CallService, destinationNumber = '+12125551234') =>
  answerCall({ store, clock, legs, companyId, agentId }, calls, {
    destinationNumber,
    // As the SIP stack does: the confirmed dialog first, then `answered`.
    beforeAnswer: (leg) => leg.request.onDialog?.(snapshot({ callId: leg.callId })),
  });

describe('the session timer ends a call (RFC 4028 §10)', () => {
  it.each(['session_expired', 'session_refresh_no_answer', 'session_refresh_481'])(
    '%s → failed_during_call / no_voip_connection, the detail kept',
    async (detail) => {
      const { calls } = makeDialer();
      const { callId, leg } = await answeredCall(calls);
      clock.advance(60_000);
      leg.fire('ended', { by: 'local', reason: { q850: 102 }, detail });
      await vi.advanceTimersByTimeAsync(0);
      expect(record(callId)).toMatchObject({
        status: 'failed_during_call',
        endCallReason: 'no_voip_connection',
        endDetail: detail,
        duration: 60,
      });
    },
  );

  it('our own BYE is still user_hungup; the far end’s is caller_hungup', async () => {
    const { calls } = makeDialer();
    const a = await answeredCall(calls);
    a.leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(a.callId)).toMatchObject({ status: 'answered', endCallReason: 'caller_hungup' });
  });
});

describe('the dialog kept while the call is answered', () => {
  it('saved at the answer and on each change, gone once the call ended', async () => {
    const { calls } = makeDialer();
    const { callId, leg } = await answeredCall(calls);
    const id = record(callId).id;
    expect(store.dialogs.list()).toEqual([
      { callRecordId: id, leg: 'callee', dialog: snapshot({ callId: leg.callId }) },
    ]);
    leg.request.onDialog?.(snapshot({ callId: leg.callId, localSeq: 5 }));
    expect(store.dialogs.list()[0]!.dialog.localSeq).toBe(5);
    leg.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    expect(store.dialogs.list()).toEqual([]);
  });

  it('gone after our own hang-up too (drain)', async () => {
    const { dialer, calls } = makeDialer();
    await answeredCall(calls);
    expect(store.dialogs.list()).toHaveLength(1);
    const drained = dialer.drain(1000);
    await vi.advanceTimersByTimeAsync(0);
    await drained;
    expect(legs[0]!.byes).toHaveLength(1);
    expect(store.dialogs.list()).toEqual([]);
  });
});

describe('after a crash: every kept dialog gets a BYE, the record is final', () => {
  it('BYE per dialog (Reason Q.850 41), records failed_during_call / call_stuck / dialog_ended_after_restart, rows forgotten', async () => {
    const first = makeDialer();
    const a = await answeredCall(first.calls);
    const b = await answeredCall(first.calls, '+12125559876');
    expect(store.dialogs.list()).toHaveLength(2);
    // "kill -9": the first dialer is simply abandoned; a new one starts on the same store.
    const { dialer } = makeDialer();
    dialer.recover();
    await dialer.pendingRecoveryByes;
    expect(ended.map((e) => e.dialog.callId).sort()).toEqual([a.leg.callId, b.leg.callId].sort());
    expect(ended[0]!.reason).toEqual({ q850: 41, text: 'gateway restarted' });
    for (const { callId } of [a, b])
      expect(record(callId)).toMatchObject({
        status: 'failed_during_call',
        endCallReason: 'call_stuck',
        endDetail: 'dialog_ended_after_restart',
        endedBy: 'recovery',
      });
    expect(store.dialogs.list()).toEqual([]);
  });

  it('a BYE nobody answers (408) is not tried again at the next start', async () => {
    const first = makeDialer();
    await answeredCall(first.calls);
    endStatus = 408;
    const { dialer } = makeDialer();
    dialer.recover();
    await dialer.pendingRecoveryByes;
    expect(ended).toHaveLength(1);
    expect(store.dialogs.list()).toEqual([]);
  });

  it('an engine that cannot end a dialog: the record is still finished, the row dropped', async () => {
    const first = makeDialer();
    const a = await answeredCall(first.calls);
    const { dialer } = makeDialer({}, { invite: signaling.invite });
    dialer.recover();
    await dialer.pendingRecoveryByes;
    expect(ended).toEqual([]);
    expect(record(a.callId).status).toBe('failed_during_call');
    expect(store.dialogs.list()).toEqual([]);
  });
});

describe('liveness: no RTP from the far end and no answer in its dialog', () => {
  const silence = { mediaInactivitySeconds: 30 };

  it('after the media inactivity time without RTP the far end is asked; no answer → BYE, no_voip_connection', async () => {
    const { calls } = makeDialer(silence);
    const { callId, leg } = await answeredCall(calls);
    leg.probeStatus = 0;
    const m = medias[0]!;
    for (let t = 5; t < 30; t += 5) {
      clock.advance(5000);
      m.report();
    }
    expect(leg.probes).toBe(0);
    clock.advance(5000);
    m.report();
    await vi.advanceTimersByTimeAsync(0);
    expect(leg.probes).toBe(1);
    expect(leg.byes).toHaveLength(1);
    expect(record(callId)).toMatchObject({
      status: 'failed_during_call',
      endCallReason: 'no_voip_connection',
      endDetail: 'far_end_probe_no_answer',
    });
  });

  it('a far end that answers keeps the call; it is asked again only after as long', async () => {
    const { calls } = makeDialer(silence);
    const { callId, leg } = await answeredCall(calls);
    const m = medias[0]!;
    for (let t = 5; t <= 90; t += 5) {
      clock.advance(5000);
      m.report();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(leg.probes).toBe(3); // at 30, 60 and 90 s
    expect(record(callId).status).toBe('in_call');
    expect(leg.byes).toHaveLength(0);
  });

  it('RTP flowing: never asked; 481 to the probe ends the call as far_end_probe_481', async () => {
    const { calls } = makeDialer(silence);
    const { callId, leg } = await answeredCall(calls);
    const m = medias[0]!;
    for (let t = 5; t <= 60; t += 5) {
      clock.advance(5000);
      m.packets += 250;
      m.report();
    }
    expect(leg.probes).toBe(0);
    leg.probeStatus = 481;
    for (let t = 5; t <= 30; t += 5) {
      clock.advance(5000);
      m.report();
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId)).toMatchObject({
      endCallReason: 'no_voip_connection',
      endDetail: 'far_end_probe_481',
    });
  });

  it('rtp.inactivitySeconds 0 turns it off', async () => {
    const { calls } = makeDialer({ mediaInactivitySeconds: 0 });
    const { leg } = await answeredCall(calls);
    for (let t = 5; t <= 120; t += 5) {
      clock.advance(5000);
      medias[0]!.report();
    }
    expect(leg.probes).toBe(0);
  });
});

describe('FarEndLiveness', () => {
  it('which probe answers mean the far end is gone', () => {
    expect([0, 408, 481].every(probeSaysGone)).toBe(true);
    expect([200, 404, 405, 486, 500, 503].some(probeSaysGone)).toBe(false);
  });

  it('one probe at a time; a probe that throws is reported, never fatal', async () => {
    const c = new ManualClock(0);
    let resolve!: (n: number) => void;
    const probe = vi.fn(() => new Promise<number>((r) => (resolve = r)));
    const gone = vi.fn();
    const l = new FarEndLiveness(c, { silenceMs: 1000, probe, gone });
    c.advance(1000);
    l.packets(0);
    c.advance(5000);
    l.packets(0);
    expect(probe).toHaveBeenCalledTimes(1);
    resolve(200);
    await Promise.resolve();
    await Promise.resolve();
    l.packets(0);
    expect(probe).toHaveBeenCalledTimes(2);
    const errors: unknown[] = [];
    const broken = new FarEndLiveness(c, {
      silenceMs: 1000,
      probe: () => {
        throw new Error('boom');
      },
      gone,
      onError: (e) => errors.push(e),
    });
    c.advance(2000);
    broken.packets(0);
    await Promise.resolve();
    await Promise.resolve();
    expect(errors).toHaveLength(1);
    expect(gone).not.toHaveBeenCalled();
  });
});
