// Model-based property of the dial path (docs/decisions/dial-path.md): the
// real CallService, Dialer, CallSession, Scheduler, RetryPolicy and an
// in-memory SQLite store, driven through random request sequences, far-end
// behaviours, opt-outs, scheduler polls and clock moves of minutes to days
// (across DST changes), with scripted SIP legs, fake media and agent links,
// and timers that run on the ManualClock only.
//
// The oracle sits in the fake signaling port: EVERY INVITE is judged at the
// instant it is sent, by rules computed here, independently of the
// production code (luxon for local time, a hand-written weekend table, and
// counters over the INVITEs this file saw and how their far ends ended):
//   - inside 09:00-21:00 in every zone of the number, unless the request
//     overrode the time rule; not a weekend day of the number's country in
//     any of its zones, unless the request overrode the day rule;
//   - not opted out at that instant;
//   - with anti-harassment on: < 3 answered calls this UTC day, < 5 in the
//     rolling 7 days and no answered call ended within the hour (all three
//     waived for the first dial of a callback the callee asked for), and
//     < 3 failed attempts this UTC day (never waived);
//   - no other INVITE to the number still live.
// At the end the clock runs on until nothing is left to do: every accepted
// call is final, every media session closed, every leg ended.
import fc from 'fast-check';
import { DateTime } from 'luxon';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AccountService } from '../../accounts/account-service.js';
import { ManualClock } from '../../clock.js';
import type { CallRecord, SkippedAttempt } from '../../model/call-record.js';
import { FINAL_STATUSES } from '../../model/call-status.js';
import { openDatabase } from '../../store/database.js';
import { createStore, type Store } from '../../store/store.js';
import { GatewayError } from '../../errors.js';
import { CallService } from '../call-service.js';
import { Dialer } from '../dialer.js';
import type { DestinationZones } from '../protections/destination-zones.js';
import { RetryPolicy } from '../scheduling/retry-policy.js';
import { Scheduler } from '../scheduling/scheduler.js';
import {
  callerIdOfRequest,
  ClockTimers,
  FakeMediaPort,
  FakeSignaling,
  fakeAgentLinks,
  type FakeLeg,
  type FarEndScript,
} from './test-support/fake-call-peers.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

/** The numbers dialed, their country and zones (the fake `zones` answers these; no I/O). */
const POOL: ReadonlyArray<{ number: string; country: string; zones: string[] }> = [
  { number: '+12125551234', country: 'US', zones: ['America/New_York'] },
  { number: '+442079460000', country: 'GB', zones: ['Europe/London'] },
  { number: '+81312345678', country: 'JP', zones: ['Asia/Tokyo'] },
  { number: '+61291234567', country: 'AU', zones: ['Australia/Sydney'] },
  { number: '+12125559876', country: 'US', zones: ['America/New_York'] },
  // A number the prefix data puts in four zones: judged in all of them.
  {
    number: '+18005550100',
    country: 'US',
    zones: ['America/New_York', 'America/Chicago', 'America/Denver', 'America/Los_Angeles'],
  },
  // Friday-Saturday weekend.
  { number: '+97235551234', country: 'IL', zones: ['Asia/Jerusalem'] },
];

/** Weekend days (ISO, 1 = Monday) of the pool's countries, written out here (not from CLDR). */
const WEEKEND: Readonly<Record<string, readonly number[]>> = {
  US: [6, 7],
  GB: [6, 7],
  JP: [6, 7],
  AU: [6, 7],
  IL: [5, 6],
};

/**
 * Run starts, each a day or two before a DST change: New York 2026-03-08,
 * London and Jerusalem 2026-03-27/29, Sydney 2026-04-05 and 2026-10-04,
 * London and Jerusalem 2026-10-25, New York 2026-11-01.
 */
const START_ANCHORS = [
  '2026-03-07T06:00:00Z',
  '2026-03-26T06:00:00Z',
  '2026-04-03T06:00:00Z',
  '2026-10-02T06:00:00Z',
  '2026-10-23T06:00:00Z',
  '2026-10-30T06:00:00Z',
].map((s) => Date.parse(s));

const RING_TIMEOUT_S = 30;
const MAX_DURATION_S = 600;
/** How far the end of a run may drive the clock to let every call finish. */
const DRAIN_DAYS = 40;

// ---------------------------------------------------------------- the oracle

/** One earlier INVITE as the far end saw it. */
export interface PastInvite {
  number: string;
  invitedAt: number;
  answeredAt?: number;
  /** Undefined while the leg is live. */
  endedAt?: number;
}

export interface DialFacts {
  now: number;
  number: string;
  country: string;
  zones: readonly string[];
  overrideTime: boolean;
  overrideDay: boolean;
  antiHarassment: boolean;
  /** The first dial of a callback the callee asked for on this number. */
  callback: boolean;
  /** The number's opt-out at `now` (until: undefined = permanent). */
  optOut?: { until?: number };
  past: readonly PastInvite[];
}

/** Why an INVITE with these facts must not have been sent (empty: it was allowed). */
export function judgeDial(f: DialFacts): string[] {
  const out: string[] = [];
  const weekend = WEEKEND[f.country] ?? [6, 7];
  for (const zone of f.zones) {
    const local = DateTime.fromMillis(f.now, { zone });
    const minute = local.hour * 60 + local.minute;
    const shown = local.toFormat('ccc yyyy-MM-dd HH:mm:ss ZZ');
    if (!f.overrideTime && (minute < 9 * 60 || minute >= 21 * 60)) {
      out.push(`outside 09:00-21:00 in ${zone} (local ${shown})`);
    }
    if (!f.overrideDay && weekend.includes(local.weekday)) {
      out.push(`weekend day of ${f.country} in ${zone} (local ${shown})`);
    }
  }
  if (f.optOut) {
    if (f.optOut.until === undefined) out.push('number permanently opted out');
    else if (f.optOut.until > f.now) out.push(`number opted out until ${iso(f.optOut.until)}`);
  }
  const mine = f.past.filter((p) => p.number === f.number);
  for (const p of mine.filter((x) => x.endedAt === undefined)) {
    out.push(`another INVITE to the number (sent ${iso(p.invitedAt)}) is still live`);
  }
  if (f.antiHarassment) {
    const dayStart = Math.floor(f.now / DAY) * DAY;
    const answered = mine.filter((p) => p.answeredAt !== undefined && p.answeredAt <= f.now);
    const failed = mine.filter(
      (p) => p.answeredAt === undefined && p.endedAt !== undefined && p.endedAt <= f.now,
    );
    if (!f.callback) {
      const today = answered.filter((p) => p.answeredAt! >= dayStart);
      if (today.length >= 3) {
        out.push(
          `daily limit: ${today.length} answered calls already this UTC day (${times(today, 'answeredAt')})`,
        );
      }
      const week = answered.filter((p) => p.answeredAt! > f.now - WEEK);
      if (week.length >= 5) {
        out.push(
          `weekly limit: ${week.length} answered calls in the last 7 days (${times(week, 'answeredAt')})`,
        );
      }
      const cooling = answered.filter((p) => (p.endedAt ?? Infinity) > f.now - HOUR);
      if (cooling.length > 0) {
        out.push(
          `cooldown: an answered call ended less than 1 h ago (${times(cooling, 'endedAt')})`,
        );
      }
    }
    const failedToday = failed.filter((p) => p.endedAt! >= dayStart);
    if (failedToday.length >= 3) {
      out.push(
        `failed limit: ${failedToday.length} failed attempts already this UTC day (${times(failedToday, 'endedAt')})`,
      );
    }
  }
  return out;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function times(list: readonly PastInvite[], key: 'answeredAt' | 'endedAt'): string {
  return list.map((p) => (p[key] === undefined ? 'live' : iso(p[key]))).join(', ');
}

// ---------------------------------------------------------------- operations

interface CallOp {
  op: 'call';
  primary: number;
  alternates: number[];
  overrideTime: boolean;
  overrideDay: boolean;
  antiHarassment: boolean | undefined;
  scheduleInMinutes: number | null;
  localSchedule: boolean;
  maxRetries: number;
  retryDelayMinutes: number;
}
type Op =
  | CallOp
  | { op: 'advance'; minutes: number; polling: boolean }
  | { op: 'tick' }
  | { op: 'farEnd'; pick: number }
  | { op: 'optOut'; number: number; hours: number | null };

const poolIndex = fc.oneof(
  // Most requests go to the first numbers, so their counters fill up.
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 1 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: POOL.length - 1 }) },
);
const mostlyFalse = fc.constantFrom(false, false, false, true);

const callOp: fc.Arbitrary<Op> = fc.record({
  op: fc.constant('call' as const),
  primary: poolIndex,
  alternates: fc.uniqueArray(poolIndex, { maxLength: 2 }),
  overrideTime: mostlyFalse,
  overrideDay: mostlyFalse,
  antiHarassment: fc.constantFrom<boolean | undefined>(undefined, true, false),
  scheduleInMinutes: fc.option(fc.integer({ min: 0, max: 3 * 1440 }), { nil: null, freq: 2 }),
  localSchedule: fc.boolean(),
  maxRetries: fc.integer({ min: 0, max: 3 }),
  retryDelayMinutes: fc.integer({ min: 30, max: 120 }),
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: callOp },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      minutes: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 59 }) },
        { weight: 2, arbitrary: fc.integer({ min: 60, max: 12 * 60 }) },
        { weight: 1, arbitrary: fc.integer({ min: 12 * 60, max: 3 * 1440 }) },
      ),
      // false: the scheduler is not polling meanwhile (down, or late), a tick catches up.
      polling: fc.constantFrom(true, true, true, false),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ op: 'tick' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant('farEnd' as const), pick: fc.nat({ max: 20 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('optOut' as const),
      number: poolIndex,
      hours: fc.option(fc.integer({ min: 1, max: 72 }), { nil: null }),
    }),
  },
);

const answering = {
  kind: fc.constant('answer' as const),
  afterS: fc.integer({ min: 1, max: 25 }),
  holdS: fc.integer({ min: 5, max: 900 }),
};
const scriptArb: fc.Arbitrary<FarEndScript> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('busy' as const),
      afterS: fc.integer({ min: 1, max: 10 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'ring' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'silent' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      ...answering,
      // Up to 45 s: past the 30 s ring timeout the gateway CANCELs first.
      afterS: fc.integer({ min: 1, max: 45 }),
      holdS: fc.option(fc.integer({ min: 5, max: 900 }), { nil: null, freq: 4 }),
    }),
  },
  {
    // DIAL_PATH_NO_CALLBACKS=1 leaves callbacks out (to look past a callback bug).
    weight: process.env.DIAL_PATH_NO_CALLBACKS === '1' ? 0 : 2,
    arbitrary: fc.record({
      ...answering,
      report: fc.record({
        kind: fc.constant('callback' as const),
        inMinutes: fc.integer({ min: 0, max: 3 * 1440 }),
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ ...answering, report: fc.constant({ kind: 'never' as const }) }),
  },
);

const scenarioArb = fc.record({
  start: fc.record({
    anchor: fc.nat({ max: START_ANCHORS.length - 1 }),
    minutes: fc.integer({ min: 0, max: 2 * 1440 }),
  }),
  // Consumed one per INVITE, in order, cycling.
  scripts: fc.array(scriptArb, { minLength: 1, maxLength: 12, size: 'max' }),
  ops: fc.array(opArb, { minLength: 1, maxLength: 60, size: 'max' }),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

// ---------------------------------------------------------------- the world

/** A request as this file made it: what the oracle needs to judge its dials. */
interface RequestModel {
  index: number;
  callerId: string;
  primary: string;
  alternates: string[];
  overrideTime: boolean;
  overrideDay: boolean;
  antiHarassment: boolean;
  /** Numbers of this call whose callee asked for a callback not yet dialed. */
  pendingCallback: Set<string>;
  callId?: string;
}

const totals = {
  runs: 0,
  dials: 0,
  byScript: new Map<string, number>(),
  callbacksExempted: 0,
  refusedAtRequest: new Map<string, number>(),
  accepted: 0,
  finalStatuses: new Map<string, number>(),
  skips: new Map<string, number>(),
};

function bump(m: Map<string, number>, k: string, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}

class World {
  readonly clock: ManualClock;
  readonly timers: ClockTimers;
  readonly store: Store;
  readonly media = new FakeMediaPort();
  readonly signaling: FakeSignaling;
  readonly dialer: Dialer;
  readonly scheduler: Scheduler;
  readonly service: CallService;
  readonly companyId: string;
  readonly requests: RequestModel[] = [];
  /** The model's opt-outs (until undefined: permanent). */
  readonly optOuts = new Map<string, { until?: number }>();
  readonly violations: string[] = [];
  readonly trace: string[] = [];
  private scriptIndex = 0;

  constructor(readonly scenario: Scenario) {
    this.clock = new ManualClock(
      START_ANCHORS[scenario.start.anchor]! + scenario.start.minutes * MINUTE,
    );
    this.timers = new ClockTimers(this.clock);
    this.store = createStore(openDatabase(':memory:'));
    const accounts = new AccountService(this.store, this.clock);
    // Holidays are not blocked, so the oracle needs no holiday table; weekends stay blocked.
    this.companyId = accounts.createCompany(
      'acme',
      null,
      {},
      {
        callingRules: { default: { blockHolidays: false } },
      },
    ).id;
    const now = iso(this.clock.now());
    const callerIds = Array.from({ length: 100 }, (_, i) => `+1415555${1000 + i}`);
    this.store.sipTrunks.insert({
      id: 't1',
      companyId: this.companyId,
      createdAt: now,
      modifiedAt: now,
      name: 'carrier',
      host: 'carrier.example',
      port: 5060,
      transport: 'udp',
      username: null,
      password: null,
      defaultCallerId: callerIds[0]!,
      callerIds,
      numberFormat: 'e164',
      techPrefix: '',
      headers: {},
      ratePerMinute: 0.01,
      isDefault: true,
      active: true,
      maxChannels: null,
    });
    this.store.agents.insert({
      id: 'a1',
      companyId: this.companyId,
      createdAt: now,
      modifiedAt: now,
      name: 'agent',
      websocketUrl: 'ws://agent.invalid',
      audioFormat: 'mulaw_8000',
      prompt: '',
      welcomeMessage: '',
      language: null,
      version: 1,
      outgoing: {
        ringTimeoutSeconds: RING_TIMEOUT_S,
        maxDurationSeconds: MAX_DURATION_S,
        recordingEnabled: false,
        voicemailDetection: false,
      },
    });
    this.signaling = new FakeSignaling({
      clock: this.clock,
      timers: this.timers,
      media: this.media,
      nextScript: () => scenario.scripts[this.scriptIndex++ % scenario.scripts.length]!,
      onInvite: (leg) => this.judge(leg),
    });
    const agents = fakeAgentLinks({
      clock: this.clock,
      timers: this.timers,
      signaling: this.signaling,
      onReport: (leg, report) => this.onReport(leg, report),
    });
    const zones = async (e164: string): Promise<DestinationZones> => {
      const p = POOL.find((x) => x.number === e164);
      return p ? { country: p.country, zones: [...p.zones] } : { country: null, zones: [] };
    };
    this.dialer = new Dialer({
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      signaling: this.signaling,
      media: this.media,
      log: pino({ level: 'silent' }),
      settings: {
        defaultRingTimeoutSeconds: RING_TIMEOUT_S,
        defaultMaxDurationSeconds: MAX_DURATION_S,
        stuckAfterSeconds: 60,
      },
      zones,
      retries: new RetryPolicy(this.clock),
      agents,
    });
    this.scheduler = new Scheduler(
      {
        schedules: this.store.schedules,
        calls: this.store.calls,
        clock: this.clock,
        dial: (id, attempt) => this.dialer.dial(id, attempt),
        timers: this.timers,
      },
      { owner: 'property' },
    );
    this.service = new CallService(this.store, this.clock, { dispatcher: this.dialer, zones });
  }

  // ---- the oracle's hooks

  private judge(leg: FakeLeg): void {
    totals.dials++;
    bump(totals.byScript, scriptName(leg.script));
    const now = this.clock.now();
    const callerId = callerIdOfRequest(leg.request);
    const req = this.requests.find((r) => r.callerId === callerId);
    const dest = POOL.find((p) => p.number === leg.number);
    const head = `INVITE #${leg.seq} at ${iso(now)} to ${leg.number}`;
    this.log(`${head} (request #${req?.index ?? '?'}, far end: ${scriptName(leg.script)})`);
    if (!req || !dest) {
      this.violations.push(`${head}: not a number or caller ID of any request (${callerId})`);
      return;
    }
    const callback = req.pendingCallback.delete(leg.number);
    if (callback) totals.callbacksExempted++;
    const reasons = judgeDial({
      now,
      number: leg.number,
      country: dest.country,
      zones: dest.zones,
      overrideTime: req.overrideTime,
      overrideDay: req.overrideDay,
      antiHarassment: req.antiHarassment,
      callback,
      optOut: this.optOuts.get(leg.number),
      past: this.signaling.legs.map((l) => ({
        number: l.number,
        invitedAt: l.invitedAt,
        answeredAt: l.answeredAt,
        endedAt: l.endedAt,
      })),
    });
    if (reasons.length > 0) {
      this.violations.push(
        `${head} for request #${req.index} ${describeRequest(req)}${callback ? ' [first dial of a callback]' : ''}:\n    - ${reasons.join('\n    - ')}`,
      );
    }
  }

  private onReport(leg: FakeLeg, report: { outboundResult?: unknown }): void {
    const req = this.requests.find((r) => r.callerId === callerIdOfRequest(leg.request));
    const result = report.outboundResult as
      | {
          askedToCallBackLater?: boolean;
          askedToNeverCallAgain?: boolean;
          dateTimeToCallBack?: string;
        }
      | undefined;
    if (result?.askedToNeverCallAgain) {
      this.optOuts.set(leg.number, {});
      this.log(`callee of ${leg.number} asked never to be called again`);
    } else if (result?.askedToCallBackLater && req) {
      req.pendingCallback.add(leg.number);
      this.log(`callee of ${leg.number} asked for a callback at ${result.dateTimeToCallBack}`);
    }
  }

  private log(line: string): void {
    this.trace.push(`${iso(this.clock.now())} ${line}`);
  }

  // ---- driving

  /** Lets every promise chain of the sessions run (no real timer is involved). */
  private async flush(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r));
    await new Promise<void>((r) => setImmediate(r));
  }

  /**
   * Moves the clock to `target`, firing every timer at its own instant and,
   * when `polling`, ticking the scheduler at each schedule's due time.
   */
  async advanceTo(target: number, polling: boolean): Promise<void> {
    await this.flush();
    for (let steps = 0; ; steps++) {
      if (steps > 50_000) throw new Error(`livelock: 50000 events before ${iso(target)}`);
      this.assertClean();
      const timer = this.timers.peek();
      const due = polling ? this.store.schedules.nextDueAt() : undefined;
      const tAt = timer && timer.due <= target ? timer.due : Infinity;
      const sAt = due !== undefined && due <= target ? due : Infinity;
      if (tAt === Infinity && sAt === Infinity) break;
      if (tAt <= sAt) {
        this.clock.set(Math.max(this.clock.now(), tAt));
        this.timers.fire(timer!.id);
      } else {
        this.clock.set(Math.max(this.clock.now(), sAt));
        await this.scheduler.tick();
      }
      await this.flush();
    }
    if (this.clock.now() < target) this.clock.set(target);
    await this.flush();
    this.assertClean();
  }

  private settle(): Promise<void> {
    return this.advanceTo(this.clock.now(), false);
  }

  async apply(op: Op, k: number): Promise<void> {
    this.log(`op ${k}: ${JSON.stringify(op)}`);
    switch (op.op) {
      case 'call':
        await this.call(op);
        break;
      case 'advance':
        await this.advanceTo(this.clock.now() + op.minutes * MINUTE, op.polling);
        break;
      case 'tick':
        await this.scheduler.tick();
        await this.settle();
        break;
      case 'farEnd': {
        const live = this.signaling.liveLegs();
        const leg = live[op.pick % Math.max(1, live.length)];
        if (!leg) break;
        if (leg.state === 'answered') leg.hangUp();
        else if (leg.state === 'early') leg.answer();
        else leg.ringing();
        this.log(`far end of INVITE #${leg.seq} now ${leg.state}`);
        await this.settle();
        break;
      }
      case 'optOut': {
        const number = POOL[op.number]!.number;
        const current = this.optOuts.get(number);
        if (current && current.until === undefined) break; // never weaken a permanent opt-out
        const until = op.hours === null ? undefined : this.clock.now() + op.hours * HOUR;
        this.store.optOuts.save({
          companyId: this.companyId,
          phoneNumber: number,
          permanent: until === undefined,
          blockedUntil: until === undefined ? null : iso(until),
          reason: 'test',
          source: 'property',
          createdAt: iso(this.clock.now()),
        });
        this.optOuts.set(number, until === undefined ? {} : { until });
        await this.settle();
        break;
      }
    }
  }

  private async call(op: CallOp): Promise<void> {
    const primary = POOL[op.primary]!.number;
    const alternates = [...new Set(op.alternates.map((i) => POOL[i]!.number))].filter(
      (n) => n !== primary,
    );
    const index = this.requests.length;
    const req: RequestModel = {
      index,
      callerId: `+1415555${1000 + index}`,
      primary,
      alternates,
      overrideTime: op.overrideTime,
      overrideDay: op.overrideDay,
      antiHarassment: op.antiHarassment ?? true, // the company default: on
      pendingCallback: new Set(),
    };
    this.requests.push(req);
    const body: Record<string, unknown> = {
      destinationNumber: primary,
      agentId: 'a1',
      callerId: req.callerId,
      additionalPhoneNumbers: alternates,
      overrideTimeRestriction: op.overrideTime,
      overrideDayRestriction: op.overrideDay,
      maxRetries: op.maxRetries,
      retryDelayMinutes: op.retryDelayMinutes,
    };
    if (op.antiHarassment !== undefined) body.useAntiHarassmentProtection = op.antiHarassment;
    if (op.scheduleInMinutes !== null) {
      const at = iso(this.clock.now() + op.scheduleInMinutes * MINUTE);
      // Without an offset it is read as local time at the destination.
      body.scheduledAt = op.localSchedule ? at.slice(0, 19) : at;
    }
    try {
      const r = await this.service.initiate(
        { company: this.store.companies.get(this.companyId)!, key: { id: 'k1', name: 'key' } },
        body,
      );
      req.callId = r.callId;
      totals.accepted++;
      this.log(
        `request #${index} accepted${r.scheduled ? ` for ${r.scheduleTime} (${r.reason})` : ''}`,
      );
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      bump(totals.refusedAtRequest, err.code);
      this.log(`request #${index} refused: ${err.code}`);
    }
    await this.settle();
  }

  /** Nothing left to happen: no timer, no due schedule, no session, no live leg. */
  quiet(): boolean {
    return (
      this.timers.size === 0 &&
      this.store.schedules.nextDueAt() === undefined &&
      this.dialer.liveCalls === 0 &&
      this.signaling.liveLegs().length === 0
    );
  }

  /** Runs the clock on (scheduler polling) until quiet, then checks the end state. */
  async finish(): Promise<void> {
    this.log('drain: the clock runs on with the scheduler polling');
    for (let d = 0; d < DRAIN_DAYS && !this.quiet(); d++) {
      await this.advanceTo(this.clock.now() + DAY, true);
    }
    const problems: string[] = [];
    if (!this.quiet()) {
      problems.push(
        `still busy ${DRAIN_DAYS} days after the last op: ${this.timers.size} timers, ` +
          `next schedule ${this.store.schedules.nextDueAt() ?? 'none'}, ${this.dialer.liveCalls} sessions, ` +
          `${this.signaling.liveLegs().length} live legs, ${this.signaling.legs.length} INVITEs in all`,
      );
    }
    for (const req of this.requests) {
      if (!req.callId) continue;
      const rec = this.store.calls.get(this.companyId, req.callId);
      if (!rec) {
        problems.push(`request #${req.index}: no record`);
        continue;
      }
      bump(totals.finalStatuses, rec.status);
      for (const a of rec.attempts ?? []) {
        if (a.status === 'skipped') bump(totals.skips, (a as SkippedAttempt).skipReason);
      }
      if (!FINAL_STATUSES.includes(rec.status)) {
        problems.push(`request #${req.index}: record not final: ${summarize(rec)}`);
      }
    }
    for (const m of this.media.sessions) {
      if (!m.closed) problems.push(`media session ${m.id} never closed`);
    }
    for (const l of this.signaling.liveLegs()) {
      problems.push(`INVITE #${l.seq} to ${l.number} still ${l.state}`);
    }
    if (problems.length > 0) this.fail(`end state wrong:\n  - ${problems.join('\n  - ')}`);
  }

  assertClean(): void {
    if (this.violations.length > 0)
      this.fail(`dial-path invariant broken:\n  ${this.violations.join('\n  ')}`);
  }

  private fail(message: string): never {
    const tail = this.trace.slice(-60).join('\n    ');
    throw new Error(`${message}\n  trace (last 60 lines):\n    ${tail}`);
  }
}

function scriptName(s: FarEndScript): string {
  if (s.kind !== 'answer') return s.kind;
  const hold = s.holdS === null ? 'hold' : `bye@${s.holdS}s`;
  return s.report ? `answer+${s.report.kind}` : `answer(${s.holdS === null ? 'hold' : 'bye'})`;
}

function describeRequest(r: RequestModel): string {
  return JSON.stringify({
    primary: r.primary,
    alternates: r.alternates,
    overrideTime: r.overrideTime,
    overrideDay: r.overrideDay,
    antiHarassment: r.antiHarassment,
  });
}

function summarize(r: CallRecord): string {
  return JSON.stringify({
    status: r.status,
    scheduledAt: r.scheduledAt,
    scheduledReason: r.scheduledReason,
    dialRound: r.dialRound,
    retries: r.retries,
    outboundResult: r.outboundResult,
    attempts: (r.attempts ?? []).length,
  });
}

async function runScenario(s: Scenario): Promise<void> {
  totals.runs++;
  const world = new World(s);
  for (const [k, op] of s.ops.entries()) await world.apply(op, k);
  await world.finish();
}

// ---------------------------------------------------------------- tests

describe('dial path property (model-based)', () => {
  it('the oracle itself: flags what it must and passes what it may', () => {
    const base: DialFacts = {
      now: Date.parse('2026-03-09T15:00:00Z'), // Monday 11:00 in New York (EDT)
      number: '+12125551234',
      country: 'US',
      zones: ['America/New_York'],
      overrideTime: false,
      overrideDay: false,
      antiHarassment: true,
      callback: false,
      past: [],
    };
    expect(judgeDial(base)).toEqual([]);
    // 08:30 EDT the day after the change (12:30Z): would be 07:30 with EST, still early.
    expect(judgeDial({ ...base, now: Date.parse('2026-03-09T12:30:00Z') })).toHaveLength(1);
    // 20:59 EDT is in, 21:00 is out.
    expect(judgeDial({ ...base, now: Date.parse('2026-03-10T00:59:59Z') })).toEqual([]);
    expect(judgeDial({ ...base, now: Date.parse('2026-03-10T01:00:00Z') })).toHaveLength(1);
    const sunday = Date.parse('2026-03-08T15:00:00Z');
    expect(judgeDial({ ...base, now: sunday })).toHaveLength(1);
    expect(judgeDial({ ...base, now: sunday, overrideDay: true })).toEqual([]);
    // Friday is a weekend day in Israel.
    expect(
      judgeDial({
        ...base,
        country: 'IL',
        zones: ['Asia/Jerusalem'],
        now: Date.parse('2026-03-13T09:00:00Z'),
      }),
    ).toHaveLength(1);
    const at = (h: number) => base.now - h * HOUR;
    const answered = (h: number): PastInvite => ({
      number: base.number,
      invitedAt: at(h) - MINUTE,
      answeredAt: at(h),
      endedAt: at(h) + 5 * MINUTE,
    });
    const failed = (h: number): PastInvite => ({
      number: base.number,
      invitedAt: at(h),
      endedAt: at(h) + 30_000,
    });
    expect(judgeDial({ ...base, past: [answered(0.5)] })).toHaveLength(1); // cooldown
    expect(judgeDial({ ...base, past: [answered(0.5)], callback: true })).toEqual([]);
    expect(judgeDial({ ...base, past: [answered(0.5)], antiHarassment: false })).toEqual([]);
    expect(judgeDial({ ...base, past: [answered(2), answered(4), answered(6)] }).join()).toMatch(
      /daily/,
    );
    expect(
      judgeDial({ ...base, past: [failed(1), failed(2), failed(3)], callback: true }).join(),
    ).toMatch(/failed/);
    const week = [1, 2, 3, 4, 5].map((d) => answered(24 * d));
    expect(judgeDial({ ...base, past: week }).join()).toMatch(/weekly/);
    expect(
      judgeDial({
        ...base,
        past: [{ number: base.number, invitedAt: at(0.01) }],
        antiHarassment: false,
      }),
    ).toHaveLength(1);
    expect(judgeDial({ ...base, optOut: {} })).toHaveLength(1);
    expect(judgeDial({ ...base, optOut: { until: base.now } })).toEqual([]);
  });

  it('every INVITE passes the rules at the instant it is sent; every call ends; media is released', async () => {
    const seed = process.env.DIAL_PATH_SEED ? Number(process.env.DIAL_PATH_SEED) : 20260421;
    const path = process.env.DIAL_PATH_PATH;
    const numRuns = process.env.DIAL_PATH_RUNS ? Number(process.env.DIAL_PATH_RUNS) : 150;
    const started = Date.now();
    try {
      await fc.assert(fc.asyncProperty(scenarioArb, runScenario), {
        seed,
        numRuns,
        ...(path ? { path } : {}),
        endOnFailure: process.env.DIAL_PATH_SHRINK === '0',
      });
    } finally {
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      console.log(
        `dial-path property: seed ${seed}, ${totals.runs} runs, ${totals.dials} dials checked in ${secs} s\n` +
          `  INVITEs by far end: ${fmt(totals.byScript)}\n` +
          `  requests accepted: ${totals.accepted}; refused at request: ${fmt(totals.refusedAtRequest)}\n` +
          `  callbacks dialed (exempt): ${totals.callbacksExempted}\n` +
          `  gate skips recorded: ${fmt(totals.skips)}\n` +
          `  final statuses: ${fmt(totals.finalStatuses)}`,
      );
    }
    expect(totals.dials).toBeGreaterThan(numRuns);
  }, 120_000);
});

function fmt(m: Map<string, number>): string {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}
