// The call state machine under fake timers, with a scripted SIP leg and
// media session: end reasons that a SIPp far end cannot easily produce.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { openDatabase } from '../store/database.js';
import { createStore, type Store } from '../store/store.js';
import { CallService } from './call-service.js';
import { Dialer } from './dialer.js';
import type { MediaLeg, MediaPort, NetworkQuality } from './ports/media-port.js';
import type { SignalingPort } from './ports/signaling-port.js';
import { realTimers } from './timers.js';
import { FakeLeg } from './session/test-support/fake-leg.js';
import { agentFixture, trunkFixture } from '../model/test-support/entity-fixtures.js';
import type { AgentLinkFactory, AgentLinkHooks } from './ports/agent-link.js';
import { RetryPolicy } from './scheduling/retry-policy.js';
import { Scheduler } from './scheduling/scheduler.js';

const NEW_YORK = async () => ({ country: 'US', zones: ['America/New_York'] });
const QUALITY: NetworkQuality = {
  packetsReceived: 10,
  packetsLost: 0,
  lossPct: 0,
  packetsOutOfOrder: 0,
  jitterMs: 1,
};

class FakeMedia extends EventEmitter {
  readonly localPort = 20000;
  readonly localAddress = '127.0.0.1';
  answerError: string | undefined;
  closed = false;
  createOffer = () => 'v=0 offer';
  applyAnswer = () => {
    if (this.answerError) throw Object.assign(new Error('bad sdp'), { code: this.answerError });
    return { codec: 'PCMU', remoteAddress: '127.0.0.1', remotePort: 4000 };
  };
  answerOffer = () => 'v=0 answer';
  onAudio = () => undefined;
  enqueue = () => 0;
  mark = () => undefined;
  clear = () => ({ droppedMs: 0, droppedMarks: [] });
  sendDtmf = () => undefined;
  stats = () => QUALITY;
  async close() {
    this.closed = true;
    return { networkQuality: QUALITY, recording: null };
  }
}

let store: Store;
let clock: ManualClock;
let legs: FakeLeg[];
let medias: FakeMedia[];
let dialer: Dialer;
let calls: CallService;
let companyId: string;
let agentId: string;

const signaling: SignalingPort = {
  invite: (req) => {
    req.onSending?.(); // as a SIP stack does, right before the INVITE leaves
    const leg = new FakeLeg(req);
    legs.push(leg);
    return leg;
  },
};
const media: MediaPort = {
  createSession: async () => {
    const m = new FakeMedia();
    medias.push(m);
    return m as unknown as MediaLeg;
  },
};

beforeEach(() => {
  vi.useFakeTimers();
  clock = new ManualClock(Date.UTC(2026, 5, 10, 15, 0, 0));
  store = createStore(openDatabase(':memory:'));
  const accounts = new AccountService(store, clock);
  const company = accounts.createCompany('acme', null, { secondsRemaining: 100 });
  companyId = company.id;
  const now = new Date(clock.now()).toISOString();
  store.sipTrunks.insert(trunkFixture({ companyId, createdAt: now, ratePerMinute: 0.6 }));
  agentId = store.agents.insert(
    agentFixture({ companyId, createdAt: now, websocketUrl: 'ws://x' }),
  ).id;
  legs = [];
  medias = [];
  dialer = new Dialer({
    store,
    clock,
    zones: NEW_YORK,
    timers: realTimers,
    signaling,
    media,
    log: pino({ level: 'silent' }),
    settings: {
      defaultRingTimeoutSeconds: 30,
      defaultMaxDurationSeconds: 1800,
      stuckAfterSeconds: 60,
      watchdogIntervalMs: 1000,
    },
  });
  calls = new CallService(store, clock, { dispatcher: dialer, zones: NEW_YORK });
});
afterEach(() => vi.useRealTimers());

const who = () => ({ company: store.companies.get(companyId)!, key: { id: 'k', name: 'key' } });
async function place(extra: Record<string, unknown> = {}) {
  const { callId } = await calls.initiate(who(), {
    destinationNumber: '+12125551234',
    agentId,
    ...extra,
  });
  await vi.advanceTimersByTimeAsync(0);
  return callId;
}
const record = (callId: string) => store.calls.get(companyId, callId)!;
async function answer(leg: FakeLeg) {
  leg.fire('provisional', { status: 180, reason: 'Ringing' });
  clock.advance(2000);
  leg.fire('answered', { sdp: 'v=0 answer' });
  await vi.advanceTimersByTimeAsync(0);
}

describe('call state machine', () => {
  it('writes trying before the INVITE leaves, then ringing, in_call and answered with timestamps and cost', async () => {
    const callId = await place();
    expect(record(callId).status).toBe('trying');
    expect(legs[0]!.request).toMatchObject({
      requestUri: 'sip:+12125551234@carrier.example:5060',
      from: { uri: 'sip:+12125550100@carrier.example' },
    });
    expect(legs[0]!.request.headers).toContainEqual([
      'P-Asserted-Identity',
      '<sip:+12125550100@carrier.example>',
    ]);
    await answer(legs[0]!);
    expect(record(callId).status).toBe('in_call');
    clock.advance(90_000);
    legs[0]!.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    const rec = record(callId);
    expect(rec).toMatchObject({
      status: 'answered',
      endCallReason: 'caller_hungup',
      duration: 90,
      totalCost: 0.9,
      networkQuality: QUALITY,
    });
    expect(store.calls.events(rec.id).map((e) => e.status)).toEqual([
      'to_be_processed',
      'trying',
      'ringing',
      'in_call',
      'answered',
    ]);
    expect(store.companies.getPlan(companyId)!.secondsRemaining).toBe(10);
    expect(medias[0]!.closed).toBe(true);
  });

  it.each(['no_selected_codec', 'no_remote_rtp_address', 'no_remote_rtp_port', 'sdp_error'])(
    'an answer with %s is hung up and recorded as failed with that reason',
    async (code) => {
      const callId = await place();
      medias[0]!.answerError = code;
      await answer(legs[0]!);
      await vi.advanceTimersByTimeAsync(0);
      expect(legs[0]!.byes).toHaveLength(1);
      expect(record(callId)).toMatchObject({ status: 'failed', endCallReason: code });
    },
  );

  it('no RTP → BYE and failed_during_call / no_rtp_stream', async () => {
    const callId = await place();
    await answer(legs[0]!);
    medias[0]!.emit('inactive', { silentForMs: 30_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(legs[0]!.byes).toHaveLength(1);
    expect(record(callId)).toMatchObject({
      status: 'failed_during_call',
      endCallReason: 'no_rtp_stream',
    });
  });

  it('the plan running out of seconds ends the call with no_seconds_available_in_plan', async () => {
    const callId = await place();
    await answer(legs[0]!);
    await vi.advanceTimersByTimeAsync(100_000);
    expect(record(callId)).toMatchObject({
      status: 'answered',
      endCallReason: 'no_seconds_available_in_plan',
    });
  });

  it('a call cannot be dialed once the plan has no seconds left', async () => {
    store.companies.charge(companyId, 100, 0, 'x');
    store.companies.savePlan({ ...store.companies.getPlan(companyId)!, secondsRemaining: 0 });
    // Accepted before the plan ran dry (request-time check passed), dialed after.
    const accepted = new CallService(store, clock, { zones: NEW_YORK });
    store.companies.savePlan({ ...store.companies.getPlan(companyId)!, secondsRemaining: 5 });
    const { callId } = await accepted.initiate(who(), {
      destinationNumber: '+12125551234',
      agentId,
    });
    store.companies.savePlan({ ...store.companies.getPlan(companyId)!, secondsRemaining: 0 });
    dialer.accepted(record(callId));
    await vi.advanceTimersByTimeAsync(0);
    expect(legs).toHaveLength(0);
    expect(record(callId)).toMatchObject({
      status: 'failed',
      endCallReason: 'no_seconds_available_in_plan',
    });
  });

  it('the ring timeout from the agent settings cancels → missed', async () => {
    const callId = await place();
    legs[0]!.fire('provisional', { status: 180, reason: 'Ringing' });
    await vi.advanceTimersByTimeAsync(19_999);
    expect(legs[0]!.cancelled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(legs[0]!.cancelled).toBe(true);
    expect(record(callId)).toMatchObject({
      status: 'missed',
      endCallReason: 'no_pickup_after_ringing_max_seconds',
    });
  });

  it('a final status is never left: a late event after the end changes nothing', async () => {
    const callId = await place();
    legs[0]!.fire('failed', { status: 486, reason: 'Busy Here', q850: 17, cause: 'response' });
    await vi.advanceTimersByTimeAsync(0);
    legs[0]!.fire('answered', { sdp: 'x' });
    legs[0]!.fire('provisional', { status: 180, reason: 'Ringing' });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId)).toMatchObject({ status: 'busy', endCallReason: 'caller_busy' });
  });

  it('the watchdog ends a session past its limits with call_stuck', async () => {
    dialer.startWatchdog();
    const callId = await place();
    await answer(legs[0]!);
    clock.advance(1000 * (30 + 1800 + 61));
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId)).toMatchObject({
      status: 'failed_during_call',
      endCallReason: 'call_stuck',
    });
  });

  it('after a restart, calls that were live are finished as call_stuck and accepted ones are dialed', async () => {
    const live = (await calls.initiate(who(), { destinationNumber: '+12125551234', agentId }))
      .callId;
    await vi.advanceTimersByTimeAsync(0);
    await answer(legs[0]!);
    const waiting = (
      await new CallService(store, clock, { zones: NEW_YORK }).initiate(who(), {
        destinationNumber: '+12125559876',
        agentId,
      })
    ).callId;
    const restarted = new Dialer({
      ...(dialer as unknown as { deps: ConstructorParameters<typeof Dialer>[0] }).deps,
    });
    restarted.recover();
    await vi.advanceTimersByTimeAsync(0);
    expect(record(live)).toMatchObject({
      status: 'failed_during_call',
      endCallReason: 'call_stuck',
    });
    expect(record(waiting).status).toBe('trying');
    expect(legs).toHaveLength(2);
  });

  it('drain hangs up live calls and refuses new ones with server_unavailable', async () => {
    const callId = await place();
    await answer(legs[0]!);
    const drained = dialer.drain(5000);
    await expect(
      calls.initiate(who(), { destinationNumber: '+12125559999', agentId }),
    ).rejects.toThrow(expect.objectContaining({ code: 'server_unavailable' }));
    await vi.advanceTimersByTimeAsync(0);
    await drained;
    expect(record(callId)).toMatchObject({
      status: 'answered',
      endCallReason: 'user_hungup',
      endedBy: 'shutdown',
    });
  });
});

describe('callbacks the callee asked for', () => {
  it('are dialed at the time asked through the cooldown, and a callback round that ends busy plans no second one', async () => {
    let hooks: AgentLinkHooks | undefined;
    const agents: AgentLinkFactory = () => ({
      connect: async () => undefined,
      start: (_media, h) => {
        hooks = h;
      },
      dtmf: () => undefined,
      stop: async () => undefined,
    });
    const d = new Dialer({
      store,
      clock,
      zones: NEW_YORK,
      timers: realTimers,
      signaling,
      media,
      log: pino({ level: 'silent' }),
      retries: new RetryPolicy(clock),
      agents,
      settings: {
        defaultRingTimeoutSeconds: 30,
        defaultMaxDurationSeconds: 1800,
        stuckAfterSeconds: 60,
      },
    });
    const svc = new CallService(store, clock, { dispatcher: d, zones: NEW_YORK });
    const { callId } = await svc.initiate(who(), {
      destinationNumber: '+12125551234',
      agentId,
      useAntiHarassmentProtection: true,
      maxRetries: 1,
    });
    await vi.advanceTimersByTimeAsync(0);
    await answer(legs[0]!);
    // Two minutes ahead: the 1-hour cooldown after this answered call would push it.
    const callbackAt = new Date(clock.now() + 2 * 60_000).toISOString();
    hooks!.result({
      outboundResult: { askedToCallBackLater: true, dateTimeToCallBack: callbackAt },
    });
    clock.advance(30_000);
    legs[0]!.fire('ended', { by: 'remote' });
    await vi.advanceTimersByTimeAsync(0);
    expect(record(callId)).toMatchObject({
      status: 'scheduled',
      scheduledAt: callbackAt,
      scheduledReason: 'customer_callback',
      callbackNumber: '+12125551234',
      retries: 0,
    });

    const scheduler = new Scheduler({
      schedules: store.schedules,
      calls: store.calls,
      clock,
      dial: (id, a) => d.dial(id, a),
    });
    clock.set(Date.parse(callbackAt));
    await scheduler.tick();
    await vi.advanceTimersByTimeAsync(0);
    expect(legs).toHaveLength(2);
    expect(record(callId).attempts?.filter((a) => a.status === 'skipped')).toEqual([]);
    legs[1]!.fire('failed', { status: 486, reason: 'Busy Here', cause: 'response' });
    await vi.advanceTimersByTimeAsync(0);
    // maxRetries 1: one retry round at most, and the earlier callback request is not planned again.
    expect(record(callId)).toMatchObject({ status: 'busy', endCallReason: 'caller_busy' });
    expect(store.schedules.openForCall(record(callId).id)).toEqual([]);
  });
});
