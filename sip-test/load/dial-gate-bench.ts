// Micro-benchmark of the dial gate (issue 21): what judging one number at
// dial time costs on the main thread, against a SQLite file holding a
// realistic history (other calls to the number, an opt-out list), for the
// kinds of numbers the gate meets: one zone inside its window, one zone
// outside it (the next allowed instant is searched), a toll-free number
// with many zones, and the whole pick (gate + attempt write, one unit of
// work). Prints the median of several rounds in µs per dial. The time and
// day rules alone are measured twice in the same run: as computed now (each
// zone's offsets from a table, issue 28) and with the luxon walk they
// replaced (kept as the test oracle), with the ratio between them.
//   npx tsx sip-test/load/dial-gate-bench.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountService } from '../../src/accounts/account-service.js';
import { ManualClock } from '../../src/clock.js';
import { checkDial } from '../../src/calls/protections/dial-gate.js';
import { callingRulesFor } from '../../src/calls/protections/calling-rules.js';
import { nextAllowedInstant } from '../../src/calls/protections/calling-window.js';
import { nextAllowedInstant as luxonNextAllowedInstant } from '../../src/calls/protections/test-support/calling-window-luxon.js';
import {
  resolveDestinationZones,
  type DestinationZones,
} from '../../src/calls/protections/destination-zones.js';
import { callRecordFixture } from '../../src/model/test-support/call-record-fixture.js';
import { openDatabase } from '../../src/store/database.js';
import { createStore } from '../../src/store/store.js';

const ROUNDS = 7;
const PER_ROUND = Number(process.env.PER_ROUND ?? 400);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const dir = mkdtempSync(join(tmpdir(), 'gate-bench-'));
const store = createStore(openDatabase(join(dir, 'bench.sqlite')));
// 2026-11-24 15:00Z: 10:00 in New York (inside), 00:00 in Tokyo (outside).
const clock = new ManualClock(Date.parse('2026-11-24T15:00:00Z'));
const companyId = new AccountService(store, clock).createCompany('bench', null, {}).id;

// History: 2,000 finished calls over the last week to 200 numbers, and 500 opt-outs.
for (let i = 0; i < 2000; i++) {
  const at = new Date(clock.now() - (i % 168) * 3_600_000).toISOString();
  store.calls.insert(
    callRecordFixture({
      id: `h${i}`,
      companyId,
      phoneNumber: `+1212555${String(1000 + (i % 200)).padStart(4, '0')}`,
      status: i % 3 === 0 ? 'answered' : 'busy',
      createdAt: at,
      modifiedAt: at,
      ...(i % 3 === 0 ? { startAt: at, endAt: at } : { endAt: at }),
    }),
  );
}
for (let i = 0; i < 500; i++) {
  store.optOuts.save({
    companyId,
    phoneNumber: `+1646555${String(1000 + i).padStart(4, '0')}`,
    permanent: true,
    blockedUntil: null,
    reason: null,
    source: 'bench',
    createdAt: new Date(clock.now()).toISOString(),
  });
}
const record = store.calls.insert(
  callRecordFixture({ id: 'live', companyId, phoneNumber: '+12125551042', status: 'trying' }),
);
const deps = { history: store.callHistory, optOuts: store.optOuts, clock };

type Mode = 'gate' | 'gate+write' | 'rules' | 'rules-luxon';

const ACTIVE = { time: true, day: true };

async function bench(label: string, number: string, mode: Mode = 'gate'): Promise<number> {
  const destination: DestinationZones = await resolveDestinationZones(number);
  const withWrite = mode === 'gate+write';
  const rules = callingRulesFor({}, destination.country);
  const once = (): void => {
    if (mode === 'rules' || mode === 'rules-luxon') {
      const rule = mode === 'rules' ? nextAllowedInstant : luxonNextAllowedInstant;
      rule(destination, clock.now(), rules, ACTIVE);
      return;
    }
    const judge = (): unknown =>
      checkDial({ record, number, destination, settings: {}, purpose: 'dial' }, deps);
    if (!withWrite) {
      judge();
      return;
    }
    store.unitOfWork.run(() => {
      judge();
      store.calls.update(record.id, { modifiedBy: 'bench' }, new Date(clock.now()).toISOString());
    });
  };
  for (let i = 0; i < 50; i++) once(); // warm-up
  const perDial: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) once();
    perDial.push(Number(process.hrtime.bigint() - t0) / 1000 / PER_ROUND);
  }
  const zones = destination.zones.length;
  const result = median(perDial);
  console.log(
    `${label.padEnd(52)} ${String(zones).padStart(2)} zone(s) ${result.toFixed(2).padStart(9)} µs/dial`,
  );
  return result;
}

/** The rules for one number, now and with the luxon walk, and the ratio. */
async function rulesBench(label: string, number: string): Promise<void> {
  const now = await bench(`${label}, table`, number, 'rules');
  const before = await bench(`${label}, luxon walk`, number, 'rules-luxon');
  console.log(`${''.padEnd(52)} luxon / table = ${(before / now).toFixed(0)}x`);
}

console.log(
  `dial gate, median of ${ROUNDS} rounds of ${PER_ROUND} dials (Node ${process.version})`,
);
await bench('New York, inside the window, 10 earlier calls', '+12125551042');
await bench('New York, inside the window, with the attempt write', '+12125551042', 'gate+write');
await bench('Tokyo, outside the window (next instant searched)', '+81312345678');
await bench('US toll-free +1 800 (zones share no hour)', '+18005550100');
await bench('opted out (decided before any rule)', '+16465551100');
console.log('the time and day rules alone, computed afresh each time (no per-minute memo):');
await rulesBench('New York, inside the window', '+12125551042');
await rulesBench('Tokyo, outside the window', '+81312345678');
await rulesBench('US toll-free +1 800', '+18005550100');
// 2026-11-27, a Friday, 22:00 in New York: the next window is after the weekend.
clock.set(Date.parse('2026-11-28T03:00:00Z'));
await rulesBench('New York, Friday night (after the weekend)', '+12125551042');
rmSync(dir, { recursive: true, force: true });
