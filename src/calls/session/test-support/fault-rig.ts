// A dialer wired to the real pieces a session fault must not leak: the real
// MediaEngine (UDP port pairs from a pool, the session count behind
// `gateway_media_sessions`) and an in-memory SQLite store, with a scripted
// SIP leg, a scripted agent link and one-shot faults injected through the
// ports (session-faults.test.ts).
import { createSocket, type Socket } from 'node:dgram';
import pino from 'pino';
import { Registry } from 'prom-client';
import { AccountService } from '../../../accounts/account-service.js';
import { ManualClock } from '../../../clock.js';
import { registerGatewayMetrics } from '../../../gateway-metrics.js';
import { MediaEngine, type MediaConfig, type MediaSession } from '../../../media/index.js';
import { SPACING_BIN_MS } from '../../../media/pacing-clock.js';
import { testPortRange } from '../../../media/test-support/port-range.js';
import type { CallPatch, CallRecord } from '../../../model/call-record.js';
import type { SipTrunk } from '../../../model/entities.js';
import { openDatabase } from '../../../store/database.js';
import { createStore, type SqliteStore } from '../../../store/store.js';
import { agentRtpToWsLatency, agentWsToRtpLatency } from '../../../agent-bridge/agent-latency.js';
import { CallService } from '../../call-service.js';
import { Dialer } from '../../dialer.js';
import type { AgentLink, AgentLinkHooks } from '../../ports/agent-link.js';
import type { UpdateOptions } from '../../ports/call-store.js';
import type { MediaLeg, MediaPort } from '../../ports/media-port.js';
import type { DialRequest, SignalingLeg, SignalingPort } from '../../ports/signaling-port.js';
import { realTimers } from '../../timers.js';
import { FakeLeg } from './fake-leg.js';
import { agentFixture, trunkFixture } from '../../../model/test-support/entity-fixtures.js';

export const NUMBER = '+12125551234';
export { FakeLeg };

/** An agent link that connects at once; `start` / `dtmf` throw when the rig says so. */
export class FakeAgentLink implements AgentLink {
  hooks: AgentLinkHooks | undefined;
  stops = 0;

  constructor(private readonly rig: FaultRig) {}

  async connect(): Promise<void> {}

  start(_media: MediaLeg, hooks: AgentLinkHooks): void {
    if (this.rig.agentStartThrows) throw this.rig.fail(new Error('agent link failed to start'));
    this.hooks = hooks;
  }

  dtmf(_digit: string): void {
    if (this.rig.agentDtmfThrows) throw this.rig.fail(new Error('agent link dtmf failed'));
  }

  async stop(): Promise<void> {
    this.stops++;
  }
}

/** What was live at the instant the injected fault was thrown. */
export interface FaultSnapshot {
  /** Date.now() when thrown (real time: "within a second" is wall-clock). */
  at: number;
  error: unknown;
  mediaSessions: number;
  portsInUse: number;
  liveCalls: number;
}

export interface RigOptions {
  media?: Partial<MediaConfig>;
  trunkHeaders?: Record<string, string>;
}

export class FaultRig {
  readonly clock = new ManualClock(Date.UTC(2026, 5, 10, 15, 0, 0)); // Wed 11:00 New York
  readonly store: SqliteStore;
  readonly engine: MediaEngine;
  readonly dialer: Dialer;
  readonly calls: CallService;
  readonly metrics = new Registry();
  readonly legs: FakeLeg[] = [];
  readonly links: FakeAgentLink[] = [];
  readonly sessions: MediaSession[] = [];
  readonly companyId: string;
  readonly trunk: SipTrunk;
  /** Set once the injected fault has been thrown. */
  fault: FaultSnapshot | undefined;
  /** Replaces the scripted SIP leg (a throwing port, the real SIP stack). */
  invite: ((req: DialRequest) => SignalingLeg) | undefined;
  /** Called with each new media session before the call uses it (to make one of its methods throw). */
  onMediaSession: ((s: MediaSession) => void) | undefined;
  agentStartThrows = false;
  agentDtmfThrows = false;
  private updateFault: ((patch: CallPatch, opts?: UpdateOptions) => boolean) | undefined;
  private sink: Socket | undefined;
  sinkPort = 0;

  constructor(opts: RigOptions = {}) {
    this.store = createStore(openDatabase(':memory:'));
    this.engine = new MediaEngine({
      ...testPortRange(100),
      bindAddress: '127.0.0.1',
      advertisedAddress: '127.0.0.1',
      ...opts.media,
    });
    const accounts = new AccountService(this.store, this.clock);
    this.companyId = accounts.createCompany('acme', null, { secondsRemaining: 100_000 }).id;
    const now = new Date(this.clock.now()).toISOString();
    this.trunk = this.store.sipTrunks.insert(
      trunkFixture({
        companyId: this.companyId,
        createdAt: now,
        headers: opts.trunkHeaders ?? {},
        ratePerMinute: 0.6,
      }),
    );
    this.store.agents.insert(agentFixture({ companyId: this.companyId, createdAt: now }));
    this.wrapCallUpdates();

    const signaling: SignalingPort = {
      invite: (req) => {
        if (this.invite) return this.invite(req);
        req.onSending?.(); // as a SIP stack does, right before the INVITE leaves
        const leg = new FakeLeg(req);
        this.legs.push(leg);
        return leg;
      },
    };
    const media: MediaPort = {
      createSession: async (o) => {
        const s = await this.engine.createSession(o);
        this.sessions.push(s);
        this.onMediaSession?.(s);
        return s;
      },
    };
    const zones = async () => ({ country: 'US', zones: ['America/New_York'] });
    this.dialer = new Dialer({
      store: this.store,
      clock: this.clock,
      timers: realTimers,
      signaling,
      media,
      zones,
      log: pino({ level: 'silent' }),
      agents: () => {
        const link = new FakeAgentLink(this);
        this.links.push(link);
        return link;
      },
      settings: {
        defaultRingTimeoutSeconds: 30,
        defaultMaxDurationSeconds: 1800,
        stuckAfterSeconds: 60,
      },
    });
    this.calls = new CallService(this.store, this.clock, { dispatcher: this.dialer, zones });
    // The gauges /metrics serves, over the same engine and dialer (as main.ts registers them).
    registerGatewayMetrics(this.metrics, {
      agentLatency: { rtpToWs: agentRtpToWsLatency, wsToRtp: agentWsToRtpLatency },
      media: this.engine,
      spacingBinMs: SPACING_BIN_MS,
      calls: this.dialer,
    });
  }

  /** A UDP socket the answer SDP points at, so our RTP has somewhere to go. */
  async start(): Promise<this> {
    const sink = createSocket('udp4');
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', r));
    this.sink = sink;
    this.sinkPort = sink.address().port;
    return this;
  }

  async dispose(): Promise<void> {
    await this.dialer.drain(200);
    await this.engine.close();
    await new Promise<void>((r) => (this.sink ? this.sink.close(() => r()) : r()));
    this.store.db.close();
  }

  /** Records the fault's instant and what was live then; returns `err` to throw. */
  fail<E>(err: E): E {
    this.fault ??= {
      at: Date.now(),
      error: err,
      mediaSessions: this.engine.activeSessions,
      portsInUse: this.portsInUse,
      liveCalls: this.dialer.liveCalls,
    };
    return err;
  }

  /** The next record write matching `when` throws (once). */
  failNextWrite(when: (patch: CallPatch, opts?: UpdateOptions) => boolean): void {
    this.updateFault = when;
  }

  /** Port pairs the engine's allocator holds (its pool is full again at 0). */
  get portsInUse(): number {
    return this.engine['ports'].allocated;
  }

  get portCapacity(): number {
    return this.engine['ports'].capacity;
  }

  async gauge(name: 'gateway_media_sessions' | 'gateway_calls_live'): Promise<number> {
    const m = await this.metrics.getSingleMetric(name)!.get();
    return m.values[0]!.value;
  }

  /** Accepts a call through the API path; resolves once its INVITE left (or the session ended first). */
  async place(): Promise<string> {
    const { callId } = await this.calls.initiate(
      { company: this.store.companies.get(this.companyId)!, key: { id: 'k', name: 'key' } },
      { destinationNumber: NUMBER, agentId: 'a1' },
    );
    await until(
      () => this.legs.length > 0 || this.fault !== undefined || !this.record(callId).active,
    );
    return callId;
  }

  record(callId: string): CallRecord {
    return this.store.calls.get(this.companyId, callId)!;
  }

  /** 200 OK with an answer pointing at the sink. */
  answerSdp(): string {
    return [
      'v=0',
      'o=- 1 1 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      `m=audio ${this.sinkPort} RTP/AVP 0 101`,
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=fmtp:101 0-16',
      'a=sendrecv',
      '',
    ].join('\r\n');
  }

  private wrapCallUpdates(): void {
    const calls = this.store.calls;
    const update = calls.update.bind(calls);
    calls.update = (id, patch, at, opts) => {
      const when = this.updateFault;
      if (when?.(patch, opts)) {
        this.updateFault = undefined;
        throw this.fail(new Error(`injected store fault on ${JSON.stringify(Object.keys(patch))}`));
      }
      return update(id, patch, at, opts);
    };
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting`);
    await sleep(5);
  }
}

/** True when nothing holds `port` and `port + 1` on 127.0.0.1 (the session's sockets are closed). */
export async function portPairFree(port: number): Promise<boolean> {
  const bind = (p: number) =>
    new Promise<Socket | undefined>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => {
        s.close();
        resolve(undefined);
      });
      s.bind({ port: p, address: '127.0.0.1', exclusive: true }, () => resolve(s));
    });
  const socks = [await bind(port), await bind(port + 1)];
  await Promise.all(
    socks.map((s) => (s ? new Promise<void>((r) => s.close(() => r())) : undefined)),
  );
  return socks.every((s) => s !== undefined);
}
