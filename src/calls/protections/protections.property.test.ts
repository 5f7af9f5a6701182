// Property (fast-check, fixed seed): for random request sequences, clock
// moves and call outcomes, written into a :memory: store and dialed either
// at once or by the scheduler, no call is ever placed outside the window or
// on a blocked day unless overridden, and no number ever gets a fourth
// answered call in a UTC day (nor a sixth in 7 days).
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { checkDial } from './dial-gate.js';
import { CallError } from '../call-error.js';
import { scheduleCall } from '../scheduling/test-support/schedule-existing-call.js';
import { Scheduler } from '../scheduling/scheduler.js';
import { publicHolidays } from './calling-rules.js';
import { resolveDestinationZones, type DestinationZones } from './destination-zones.js';
import { evaluateProtections } from './evaluate-protections.js';
import { addCall, makeKit } from './protections-test-kit.js';

const NUMBERS = [
  '+12125551234',
  '+13105551234',
  '+442071234567',
  '+302101234567',
  '+97235550100',
  '+97145550100',
  '+16055550100',
  '+61291234567',
];
/** Independent of the code under test: CLDR weekends of these countries. */
const WEEKEND: Record<string, number[]> = {
  US: [6, 7],
  GB: [6, 7],
  GR: [6, 7],
  IL: [5, 6],
  AE: [6, 7],
  AU: [6, 7],
};

interface Dial {
  number: string;
  at: number;
  answered: boolean;
  overrideTime: boolean;
  overrideDay: boolean;
}

type Cmd =
  | { t: 'advance'; ms: number }
  | {
      t: 'request';
      i: number;
      laterMs: number | null;
      agent: number;
      overrideTime: boolean;
      overrideDay: boolean;
      answered: boolean;
    };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('advance' as const),
      ms: fc.oneof(
        fc.integer({ min: 3600_000, max: 3 * 3600_000 }),
        fc.integer({ min: 1, max: 30 * 3600_000 }),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('request' as const),
      // Most requests go to one number, so its limits are reached.
      i: fc.oneof(
        { weight: 3, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.integer({ min: 0, max: NUMBERS.length - 1 }) },
      ),
      laterMs: fc.option(fc.integer({ min: 0, max: 3 * 86_400_000 }), { nil: null, freq: 3 }),
      agent: fc.integer({ min: 1, max: 3 }),
      overrideTime: fc.boolean(),
      overrideDay: fc.boolean(),
      answered: fc.boolean(),
    }),
  },
);

function allowedAt(dest: DestinationZones, d: Dial): boolean {
  return dest.zones.every((zone) => {
    const local = DateTime.fromMillis(d.at, { zone });
    const minute = local.hour * 60 + local.minute;
    const timeOk = d.overrideTime || (minute >= 9 * 60 && minute < 21 * 60);
    const day = local.toISODate()!;
    const dayOk =
      d.overrideDay ||
      (!WEEKEND[dest.country!]!.includes(local.weekday) &&
        !publicHolidays(dest.country!, local.year).has(day));
    return timeOk && dayOk;
  });
}

describe('protections property', () => {
  it('never dials outside the rules, never a 4th answered call in a UTC day', async () => {
    const tally = { direct: 0, scheduled: 0, maxPerDay: 0, refusals: new Map<string, number>() };
    const gated = new Map<string, number>();
    const dests = new Map<string, DestinationZones>();
    for (const n of NUMBERS) dests.set(n, await resolveDestinationZones(n));

    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 60 }), async (cmds) => {
        const kit = makeKit({ now: '2026-03-10T14:00:00Z' });
        const dials: Dial[] = [];
        const sch = new Scheduler(
          {
            schedules: kit.schedules,
            calls: kit.calls,
            clock: kit.clock,
            // The call session's first step: the dial gate, then the dial.
            dial: (id) => {
              const r = kit.calls.getById(id)!;
              const now = kit.clock.now();
              const planned = r.metadata.plannedAnswered === 'true';
              const verdict = checkDial(
                {
                  record: r,
                  number: r.phoneNumber,
                  destination: dests.get(r.phoneNumber)!,
                  settings: {},
                  purpose: 'dial',
                },
                kit.deps,
              );
              if (verdict.kind === 'skip') {
                gated.set(verdict.reason, (gated.get(verdict.reason) ?? 0) + 1);
                if (verdict.nextAllowedAt === undefined) {
                  kit.calls.update(id, { status: 'cancelled' }, iso(now));
                } else {
                  kit.calls.update(id, { status: 'to_be_processed' }, iso(now));
                  scheduleCall(kit, {
                    recordId: id,
                    dueAt: verdict.nextAllowedAt,
                    kind: 'initial',
                    round: 1,
                  });
                }
                return Promise.resolve();
              }
              kit.calls.update(id, outcome(planned, now), iso(now), {
                onlyFrom: ['scheduled', 'to_be_processed'],
              });
              tally.scheduled++;
              dials.push({
                number: r.phoneNumber,
                at: now,
                answered: planned,
                overrideTime: r.overrideTimeRestriction === true,
                overrideDay: r.overrideDayRestriction === true,
              });
              return Promise.resolve();
            },
          },
          { owner: 'p' },
        );
        for (const c of cmds) {
          if (c.t === 'advance') {
            kit.clock.advance(c.ms);
            await sch.tick();
            continue;
          }
          const number = NUMBERS[c.i]!;
          const now = kit.clock.now();
          try {
            const d = evaluateProtections(
              {
                companyId: kit.companyId,
                settings: {},
                phoneNumber: number,
                agentId: `agent-${c.agent}`,
                scheduledAt: c.laterMs === null ? null : iso(now + c.laterMs),
                overrideTimeRestriction: c.overrideTime,
                overrideDayRestriction: c.overrideDay,
                antiHarassment: true,
                destination: dests.get(number)!,
              },
              kit.deps,
            );
            const fields = {
              phoneNumber: number,
              overrideTimeRestriction: c.overrideTime,
              overrideDayRestriction: c.overrideDay,
              useAntiHarassmentProtection: true,
              metadata: { plannedAnswered: String(c.answered) },
              agentId: `agent-${c.agent}`,
            };
            if (d.kind === 'allow') {
              addCall(kit, { ...fields, ...outcome(c.answered, now) });
              tally.direct++;
              dials.push({ number, at: now, answered: c.answered, ...pick(c) });
            } else {
              const r = addCall(kit, { ...fields, status: 'scheduled', scheduledAt: d.at });
              scheduleCall(kit, {
                recordId: r.id,
                dueAt: Date.parse(d.at),
                kind: 'initial',
                round: 1,
              });
            }
          } catch (e) {
            if (!(e instanceof CallError)) throw e;
            tally.refusals.set(e.code, (tally.refusals.get(e.code) ?? 0) + 1);
          }
        }
        for (const d of dials) expect(allowedAt(dests.get(d.number)!, d)).toBe(true);
        const answered = dials.filter((d) => d.answered);
        for (const d of answered) {
          const same = answered.filter((o) => o.number === d.number);
          const day = Math.floor(d.at / 86_400_000);
          const perDay = same.filter((o) => Math.floor(o.at / 86_400_000) === day).length;
          tally.maxPerDay = Math.max(tally.maxPerDay, perDay);
          expect(
            same.filter((o) => Math.floor(o.at / 86_400_000) === day).length,
          ).toBeLessThanOrEqual(3);
          expect(
            same.filter((o) => o.at > d.at - 7 * 86_400_000 && o.at <= d.at).length,
          ).toBeLessThanOrEqual(5);
        }
      }),
      { seed: 20260310, numRuns: 150 },
    );
    // The runs did exercise every path (not a vacuous pass), the gate included.
    expect([...gated.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(tally.direct).toBeGreaterThan(20);
    expect(tally.scheduled).toBeGreaterThan(20);
    expect(tally.maxPerDay).toBe(3); // the daily limit was reached, never passed
    for (const code of ['call_already_in_progress', 'cooldown_period_active']) {
      expect(tally.refusals.get(code) ?? 0).toBeGreaterThan(0);
    }
  }, 120_000);
});

describe('anti-harassment counters property', () => {
  it('a 4th answered call in a UTC day is always refused, and the runs do try one', async () => {
    const number = NUMBERS[0]!;
    const dest = await resolveDestinationZones(number);
    let refusedDaily = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            // Just past the 1-hour cooldown (from the 2-minute call's end), or longer.
            gapMs: fc.oneof(
              { weight: 4, arbitrary: fc.integer({ min: 62 * 60_000, max: 90 * 60_000 }) },
              { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 * 3600_000 }) },
            ),
            answered: fc.oneof(
              { weight: 4, arbitrary: fc.constant(true) },
              { weight: 1, arbitrary: fc.constant(false) },
            ),
          }),
          { minLength: 4, maxLength: 40 },
        ),
        async (steps) => {
          const kit = makeKit({ now: '2026-03-10T00:30:00Z' });
          const answeredAt: number[] = [];
          for (const [k, step] of steps.entries()) {
            kit.clock.advance(step.gapMs);
            const now = kit.clock.now();
            try {
              evaluateProtections(
                {
                  companyId: kit.companyId,
                  settings: {},
                  phoneNumber: number,
                  // A new agent each time: the 60-second duplicate rule is not what is tested here.
                  agentId: `agent-${k}`,
                  overrideTimeRestriction: true,
                  overrideDayRestriction: true,
                  antiHarassment: true,
                  destination: dest,
                },
                kit.deps,
              );
              addCall(kit, {
                phoneNumber: number,
                agentId: `agent-${k}`,
                useAntiHarassmentProtection: true,
                ...outcome(step.answered, now),
              });
              if (step.answered) answeredAt.push(now);
            } catch (e) {
              if (!(e instanceof CallError)) throw e;
              if (e.code === 'daily_call_limit_reached') refusedDaily++;
            }
          }
          for (const t of answeredAt) {
            const day = Math.floor(t / 86_400_000);
            expect(
              answeredAt.filter((o) => Math.floor(o / 86_400_000) === day).length,
            ).toBeLessThanOrEqual(3);
          }
        },
      ),
      { seed: 20261122, numRuns: 200 },
    );
    expect(refusedDaily).toBeGreaterThan(0);
  }, 60_000);
});

function outcome(answered: boolean, now: number) {
  return answered
    ? { status: 'answered' as const, startAt: iso(now), endAt: iso(now + 120_000) }
    : { status: 'busy' as const, endAt: iso(now) };
}

function pick(c: { overrideTime: boolean; overrideDay: boolean }) {
  return { overrideTime: c.overrideTime, overrideDay: c.overrideDay };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
