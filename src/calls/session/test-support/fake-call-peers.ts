// Scripted peers of the dial path for tests that drive the real call session
// through virtual days: timers that run on a ManualClock (no real time, no
// vi fake timers), a signaling port whose legs follow a script chosen per
// INVITE, media sessions that remember whether they were closed, and agent
// links that report a result shortly after the answer. Every far-end event
// is a timer on the same clock, so a run is deterministic.
import { EventEmitter } from 'node:events';
import type { ManualClock } from '../../../clock.js';
import type {
  AgentLink,
  AgentLinkFactory,
  AgentLinkHooks,
  AgentReport,
} from '../../ports/agent-link.js';
import type {
  MediaLeg,
  MediaPort,
  NegotiatedMedia,
  NetworkQuality,
  ReceivedFrame,
} from '../../ports/media-port.js';
import type {
  DialRequest,
  LegEvents,
  SignalingLeg,
  SignalingPort,
} from '../../ports/signaling-port.js';
import type { Timers } from '../../timers.js';

const SECOND = 1000;
/** RFC 3261 Timer B (64 × T1). */
const TIMER_B_MS = 32 * SECOND;

// ---------------------------------------------------------------- timers

interface PendingTimer {
  due: number;
  fn: () => void;
  every?: number;
}

/** `Timers` on a ManualClock: nothing runs until the test fires it. */
export class ClockTimers implements Timers {
  private seq = 1;
  private readonly pending = new Map<number, PendingTimer>();

  constructor(private readonly clock: ManualClock) {}

  setTimeout(fn: () => void, ms: number): number {
    const id = this.seq++;
    this.pending.set(id, { due: this.clock.now() + Math.max(0, ms || 0), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === 'number') this.pending.delete(handle);
  }

  setInterval(fn: () => void, ms: number): number {
    const id = this.seq++;
    const every = Math.max(1, ms || 0);
    this.pending.set(id, { due: this.clock.now() + every, fn, every });
    return id;
  }

  clearInterval(handle: unknown): void {
    this.clearTimeout(handle);
  }

  get size(): number {
    return this.pending.size;
  }

  /** The timer that fires next: earliest due time, then the one set first. */
  peek(): { id: number; due: number } | undefined {
    let best: { id: number; due: number } | undefined;
    for (const [id, t] of this.pending) if (!best || t.due < best.due) best = { id, due: t.due };
    return best;
  }

  /** Runs timer `id` now (an interval is re-armed first). */
  fire(id: number): void {
    const t = this.pending.get(id);
    if (!t) return;
    if (t.every) t.due += t.every;
    else this.pending.delete(id);
    t.fn();
  }
}

// ---------------------------------------------------------------- media

const QUALITY: NetworkQuality = {
  packetsReceived: 100,
  packetsLost: 0,
  lossPct: 0,
  packetsOutOfOrder: 0,
  jitterMs: 1,
};

/** A media session that only remembers what was done to it. */
export class FakeMedia extends EventEmitter {
  readonly localPort: number;
  readonly localAddress = '127.0.0.1';
  readonly offer: string;
  closed = false;

  constructor(readonly id: number) {
    super();
    this.localPort = 20000 + 2 * id;
    this.offer = `v=0\r\no=fake ${id} 1 IN IP4 127.0.0.1\r\n`;
  }

  createOffer(): string {
    return this.offer;
  }
  applyAnswer(): NegotiatedMedia {
    return { codec: 'PCMU', remoteAddress: '192.0.2.10', remotePort: 40000 };
  }
  answerOffer(): string {
    return this.offer;
  }
  onAudio(_handler: (frame: ReceivedFrame) => void): void {}
  enqueue(): number {
    return 0;
  }
  mark(): void {}
  clear(): { droppedMs: number; droppedMarks: string[] } {
    return { droppedMs: 0, droppedMarks: [] };
  }
  sendDtmf(): void {}
  stats(): NetworkQuality {
    return QUALITY;
  }
  async close(): Promise<{ networkQuality: NetworkQuality; recording: null }> {
    this.closed = true;
    return { networkQuality: QUALITY, recording: null };
  }
}

/** Creates FakeMedia sessions and finds them again by their SDP offer. */
export class FakeMediaPort implements MediaPort {
  readonly sessions: FakeMedia[] = [];

  async createSession(): Promise<MediaLeg> {
    const m = new FakeMedia(this.sessions.length + 1);
    this.sessions.push(m);
    return m as unknown as MediaLeg;
  }

  byOffer(sdp: string): FakeMedia | undefined {
    return this.sessions.find((m) => m.offer === sdp);
  }
}

// ---------------------------------------------------------------- signaling

/** What the far end does with one INVITE. */
export type FarEndScript =
  /** 486 Busy Here after `afterS` seconds. */
  | { kind: 'busy'; afterS: number }
  /** 180 Ringing after a second, then nothing (the ring timeout CANCELs: 487). */
  | { kind: 'ring' }
  /** Nothing at all (not even 180): the gateway gives up at its ring timeout. */
  | { kind: 'silent' }
  /**
   * 180, then 200 OK at `afterS`; BYE from the far end `holdS` seconds later
   * (null: never, the call lasts until the gateway or a far-end op ends it).
   * `report`: the callee's agent reports that result a second after the answer.
   */
  | {
      kind: 'answer';
      afterS: number;
      holdS: number | null;
      report?: { kind: 'callback'; inMinutes: number } | { kind: 'never' };
    };

export type LegState = 'calling' | 'early' | 'answered' | 'ended';

/** One INVITE as the far end saw it. */
export class FakeLeg extends EventEmitter implements SignalingLeg {
  readonly callId: string;
  state: LegState = 'calling';
  readonly invitedAt: number;
  answeredAt: number | undefined;
  /** When the leg ended (final response, BYE either way, or the gateway gave up). */
  endedAt: number | undefined;
  endedBy: 'far_end' | 'gateway' | undefined;
  /** The media session whose offer the INVITE carried. */
  media: FakeMedia | undefined;
  cancels = 0;
  byes = 0;

  constructor(
    readonly seq: number,
    readonly request: DialRequest,
    readonly number: string,
    readonly script: FarEndScript,
    private readonly clock: ManualClock,
  ) {
    super();
    this.callId = `fake-leg-${seq}`;
    this.invitedAt = clock.now();
  }

  override on<K extends keyof LegEvents & string>(
    event: K,
    listener: (e: LegEvents[K]) => void,
  ): this {
    return super.on(event, listener);
  }

  get live(): boolean {
    return this.state !== 'ended';
  }

  /** CANCEL: 487 when a provisional came; before one, the gateway simply gives up (RFC 3261 §9.1). */
  cancel(): void {
    this.cancels++;
    if (this.state === 'calling') {
      this.end('gateway');
      return;
    }
    if (this.state !== 'early') return;
    this.end('gateway');
    queueMicrotask(() =>
      this.emit('failed', { status: 487, reason: 'Request Terminated', cause: 'cancelled' }),
    );
  }

  async bye(): Promise<void> {
    this.byes++;
    if (this.state !== 'answered') return;
    this.end('gateway');
    queueMicrotask(() => this.emit('ended', { by: 'local' }));
  }

  // far-end actions (each is a no-op when the leg is past the point it applies to)

  ringing(): void {
    if (this.state !== 'calling') return;
    this.state = 'early';
    this.emit('provisional', { status: 180, reason: 'Ringing' });
  }

  answer(): void {
    if (this.state !== 'calling' && this.state !== 'early') return;
    this.state = 'answered';
    this.answeredAt = this.clock.now();
    this.emit('answered', { sdp: 'v=0\r\no=far 1 1 IN IP4 192.0.2.10\r\n' });
  }

  reject(status: number, reason: string, cause: 'response' | 'timeout' = 'response'): void {
    if (this.state !== 'calling' && this.state !== 'early') return;
    this.end('far_end');
    this.emit('failed', { status, reason, cause, ...(status === 486 ? { q850: 17 } : {}) });
  }

  hangUp(): void {
    if (this.state !== 'answered') return;
    this.end('far_end');
    this.emit('ended', { by: 'remote' });
  }

  private end(by: 'far_end' | 'gateway'): void {
    this.state = 'ended';
    this.endedAt = this.clock.now();
    this.endedBy = by;
  }
}

export interface FakeSignalingOptions {
  clock: ManualClock;
  timers: ClockTimers;
  media: FakeMediaPort;
  /** The far end's behaviour for the next INVITE. */
  nextScript: () => FarEndScript;
  /** Told of each INVITE before the far end reacts to it (and before it is listed in `legs`). */
  onInvite?: (leg: FakeLeg) => void;
}

/** The number in a Request-URI (`sip:+12125551234@host:5060`). */
export function numberOfRequest(request: Pick<DialRequest, 'requestUri'>): string {
  const m = /^sips?:([^@;]+)@/.exec(request.requestUri);
  return m?.[1] ?? request.requestUri;
}

/** The user part of the From URI (the caller ID the request asked for). */
export function callerIdOfRequest(request: Pick<DialRequest, 'from'>): string {
  const m = /^sips?:([^@;]+)@/.exec(request.from.uri);
  return m?.[1] ?? request.from.uri;
}

export class FakeSignaling implements SignalingPort {
  readonly legs: FakeLeg[] = [];

  constructor(private readonly opts: FakeSignalingOptions) {}

  invite(request: DialRequest): SignalingLeg {
    request.onSending?.(); // as a SIP stack does, right before the INVITE leaves
    const { clock, timers } = this.opts;
    const leg = new FakeLeg(
      this.legs.length + 1,
      request,
      numberOfRequest(request),
      this.opts.nextScript(),
      clock,
    );
    leg.media = this.opts.media.byOffer(request.sdp);
    this.opts.onInvite?.(leg);
    this.legs.push(leg);
    const s = leg.script;
    const at = (seconds: number, fn: () => void) => timers.setTimeout(fn, seconds * SECOND);
    switch (s.kind) {
      case 'busy':
        at(s.afterS, () => leg.reject(486, 'Busy Here'));
        break;
      case 'ring':
        at(1, () => leg.ringing());
        break;
      case 'silent':
        timers.setTimeout(() => leg.reject(408, 'Request Timeout', 'timeout'), TIMER_B_MS);
        break;
      case 'answer':
        at(Math.min(1, s.afterS), () => leg.ringing());
        at(s.afterS, () => {
          leg.answer();
          if (s.holdS !== null && leg.state === 'answered') at(s.holdS, () => leg.hangUp());
        });
        break;
    }
    return leg;
  }

  /** The legs a far-end op can still act on. */
  liveLegs(): FakeLeg[] {
    return this.legs.filter((l) => l.live);
  }
}

// ---------------------------------------------------------------- agent

export interface FakeAgentOptions {
  clock: ManualClock;
  timers: ClockTimers;
  signaling: FakeSignaling;
  /** Told when a report was handed to the session (the callee asked for it then). */
  onReport?: (leg: FakeLeg, report: AgentReport) => void;
}

/** Agent links that connect at once and report the script's result after the answer. */
export function fakeAgentLinks(opts: FakeAgentOptions): AgentLinkFactory {
  return () => {
    const link: AgentLink = {
      connect: async () => undefined,
      start: (media: MediaLeg, hooks: AgentLinkHooks) => {
        // The session hands the agent the callee's media through its routes (media-routes.ts).
        const inner = (media as { inner?: MediaLeg }).inner ?? media;
        const leg = opts.signaling.legs.find(
          (l) => (l.media as unknown as MediaLeg | undefined) === inner,
        );
        const s = leg?.script;
        if (!leg || s?.kind !== 'answer' || !s.report) return;
        const wanted = s.report;
        opts.timers.setTimeout(() => {
          if (leg.state !== 'answered') return;
          const report: AgentReport =
            wanted.kind === 'callback'
              ? {
                  outboundResult: {
                    humanResponded: true,
                    askedToCallBackLater: true,
                    dateTimeToCallBack: new Date(
                      opts.clock.now() + wanted.inMinutes * 60_000,
                    ).toISOString(),
                  },
                }
              : { outboundResult: { humanResponded: true, askedToNeverCallAgain: true } };
          opts.onReport?.(leg, report);
          hooks.result(report);
        }, SECOND);
      },
      dtmf: () => undefined,
      stop: async () => undefined,
    };
    return link;
  };
}
