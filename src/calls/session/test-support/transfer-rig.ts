// The rig shared by the domain tests of transfers and of zombie calls
// (blind-transfer, bridge-transfer, zombie-calls): a fake media session, a
// signaling port handing out scripted legs (fake-leg.ts), the Dialer and
// CallService over the real store, a company with a trunk and an agent, and
// a call taken to in_call. Each test keeps its own lists and hooks.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { AccountService } from '../../../accounts/account-service.js';
import { ManualClock } from '../../../clock.js';
import type { NetworkQuality } from '../../../model/call-record.js';
import { agentFixture, trunkFixture } from '../../../model/test-support/entity-fixtures.js';
import { openDatabase } from '../../../store/database.js';
import { createStore, type Store } from '../../../store/store.js';
import { CallService } from '../../call-service.js';
import { Dialer, type DialerSettings } from '../../dialer.js';
import type { AgentLink, AgentLinkHooks, TransferProgressEvent } from '../../ports/agent-link.js';
import type { MediaLeg, MediaPort, ReceivedFrame } from '../../ports/media-port.js';
import type { SignalingPort } from '../../ports/signaling-port.js';
import { realTimers } from '../../timers.js';
import { FakeLeg } from './fake-leg.js';

export const NEW_YORK = async () => ({ country: 'US', zones: ['America/New_York'] });

/** One media session: one audio handler (as MediaSession), what was enqueued kept. */
export class FakeMedia extends EventEmitter {
  constructor(
    readonly localPort = 20000,
    private readonly jitterMs = 0,
  ) {
    super();
  }
  readonly localAddress = '127.0.0.1';
  handler: ((f: ReceivedFrame) => void) | undefined;
  enqueued: Uint8Array[] = [];
  closed = 0;
  packets = 0;
  createOffer = () => 'v=0 offer';
  applyAnswer = () => ({ codec: 'PCMU', remoteAddress: '127.0.0.1', remotePort: 4000 });
  answerOffer = () => 'v=0 answer';
  onAudio = (h: (f: ReceivedFrame) => void) => {
    this.handler = h;
  };
  enqueue = (a: Uint8Array) => {
    this.enqueued.push(a);
    return a.length / 8;
  };
  mark = (_name: string): void => undefined;
  clear = (): { droppedMs: number; droppedMarks: string[] } => ({ droppedMs: 0, droppedMarks: [] });
  sendDtmf = (_digits: string): void => undefined;
  stats = (): NetworkQuality => ({
    packetsReceived: this.packets,
    packetsLost: 0,
    lossPct: 0,
    packetsOutOfOrder: 0,
    jitterMs: this.jitterMs,
  });
  /** RTP from the far end of this leg. */
  receive(bytes: number[]): void {
    this.packets++;
    this.handler?.({ ulaw: Buffer.from(bytes), mediaTimeMs: 0, receivedAt: 0 });
  }
  /** The media layer's periodic report (every 5 s in the real engine). */
  report(): void {
    this.emit('stats', this.stats());
  }
  async close() {
    this.closed++;
    return { networkQuality: this.stats(), recording: null };
  }
}

/** A signaling port whose every INVITE is a scripted leg, handed to `onLeg`. */
export function legSignaling(onLeg: (leg: FakeLeg) => void): SignalingPort {
  return {
    invite: (req) => {
      req.onSending?.();
      const leg = new FakeLeg(req);
      onLeg(leg);
      return leg;
    },
  };
}

/** A media port whose every session is made by `make` and handed to `onMedia`. */
export function fakeMediaPort(
  onMedia: (m: FakeMedia) => void = () => undefined,
  make: () => FakeMedia = () => new FakeMedia(),
): MediaPort {
  return {
    createSession: async () => {
      const m = make();
      onMedia(m);
      return m as unknown as MediaLeg;
    },
  };
}

/** What a test agent saw: the media it was given, its hooks, what it heard and was told. */
export class AgentSpy {
  media: MediaLeg | undefined;
  hooks: AgentLinkHooks | undefined;
  /** The first byte of each frame it heard. */
  heard: number[] = [];
  digits: string[] = [];
  told: TransferProgressEvent[] = [];
  stopped = 0;

  /** A link factory whose every link reports here. */
  links(): () => AgentLink {
    return () => ({
      connect: async () => undefined,
      start: (m, hooks) => {
        this.media = m;
        this.hooks = hooks;
        m.onAudio((f) => this.heard.push(f.ulaw[0]!));
        m.on('dtmf', (e) => this.digits.push(e.digit));
      },
      dtmf: () => undefined,
      transferStatus: (e) => this.told.push(e),
      stop: async () => {
        this.stopped++;
      },
    });
  }
}

export interface CallsOptions {
  store: Store;
  clock: ManualClock;
  signaling: SignalingPort;
  media: MediaPort;
  settings?: Partial<DialerSettings>;
  agents?: () => AgentLink;
}

/** The Dialer and a CallService dispatching to it. */
export function makeDialerAndCalls(o: CallsOptions): { dialer: Dialer; calls: CallService } {
  const dialer = new Dialer({
    store: o.store,
    clock: o.clock,
    zones: NEW_YORK,
    timers: realTimers,
    signaling: o.signaling,
    media: o.media,
    log: pino({ level: 'silent' }),
    settings: {
      defaultRingTimeoutSeconds: 30,
      defaultMaxDurationSeconds: 3600,
      stuckAfterSeconds: 60,
      ...o.settings,
    },
    ...(o.agents ? { agents: o.agents } : {}),
  });
  return {
    dialer,
    calls: new CallService(o.store, o.clock, { dispatcher: dialer, zones: NEW_YORK }),
  };
}

/** A company with credit, a SIP trunk and an agent. */
export function seedCompany(
  store: Store,
  clock: ManualClock,
  agent: { websocketUrl?: string } = {},
): { companyId: string; agentId: string } {
  const accounts = new AccountService(store, clock);
  const companyId = accounts.createCompany('acme', null, { secondsRemaining: 100_000 }).id;
  const now = new Date(clock.now()).toISOString();
  store.sipTrunks.insert(trunkFixture({ companyId, createdAt: now }));
  const agentId = store.agents.insert(agentFixture({ ...agent, companyId, createdAt: now })).id;
  return { companyId, agentId };
}

/** A fresh clock (10 June 2026, 15:00 UTC) and in-memory store, seeded by seedCompany. */
export function freshWorld(agent: { websocketUrl?: string } = {}): {
  store: Store;
  clock: ManualClock;
  companyId: string;
  agentId: string;
} {
  const clock = new ManualClock(Date.UTC(2026, 5, 10, 15, 0, 0));
  const store = createStore(openDatabase(':memory:'));
  return { store, clock, ...seedCompany(store, clock, agent) };
}

export interface RigWorld {
  store: Store;
  clock: ManualClock;
  legs: FakeLeg[];
  companyId: string;
  agentId: string;
}

/** A call initiated, ringing, then answered one second later: in_call. */
export async function answerCall(
  w: RigWorld,
  calls: CallService,
  opts: { destinationNumber?: string; beforeAnswer?: (leg: FakeLeg) => void } = {},
): Promise<{ callId: string; leg: FakeLeg }> {
  const who = { company: w.store.companies.get(w.companyId)!, key: { id: 'k', name: 'key' } };
  const { callId } = await calls.initiate(who, {
    destinationNumber: opts.destinationNumber ?? '+12125551234',
    agentId: w.agentId,
  });
  await vi.advanceTimersByTimeAsync(0);
  const leg = w.legs.at(-1)!;
  leg.fire('provisional', { status: 180, reason: 'Ringing' });
  w.clock.advance(1000);
  opts.beforeAnswer?.(leg);
  leg.fire('answered', { sdp: 'v=0 answer' });
  await vi.advanceTimersByTimeAsync(0);
  expect(w.store.calls.get(w.companyId, callId)!.status).toBe('in_call');
  return { callId, leg };
}

/** The world of a test of transfers by a second leg, fresh before each test. */
export interface TwoLegWorld extends RigWorld {
  medias: FakeMedia[];
  agent: AgentSpy;
  /** A CallService whose calls reach `agent` and whose media are kept in `medias`. */
  makeCalls(): CallService;
  record(callId: string): ReturnType<Store['calls']['get']> & object;
}

/**
 * Registers the hooks that give each test a fresh TwoLegWorld (fake timers
 * on, every media session kept, each on its own port) and returns it.
 */
export function useTwoLegWorld(): TwoLegWorld {
  const w = { legs: [], medias: [] } as unknown as TwoLegWorld;
  const signaling = legSignaling((leg) => w.legs.push(leg));
  const media = fakeMediaPort(
    (m) => w.medias.push(m),
    () => new FakeMedia(20000 + 2 * w.medias.length),
  );
  w.makeCalls = () =>
    makeDialerAndCalls({
      store: w.store,
      clock: w.clock,
      signaling,
      media,
      settings: { stuckAfterSeconds: 600 },
      agents: w.agent.links(),
    }).calls;
  w.record = (callId) => w.store.calls.get(w.companyId, callId)!;
  beforeEach(() => {
    vi.useFakeTimers();
    Object.assign(w, freshWorld(), { legs: [], medias: [], agent: new AgentSpy() });
  });
  afterEach(() => vi.useRealTimers());
  return w;
}
