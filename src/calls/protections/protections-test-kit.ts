// Test helpers for the protections and the scheduler: a store on :memory:
// (or a file), a company, and call records written the way the call
// session writes them.
import { randomUUID } from 'node:crypto';
import { AccountService } from '../../accounts/account-service.js';
import { ManualClock } from '../../clock.js';
import { SqliteCallHistoryRepository } from '../../store/call-history-repository.js';
import type { CallRecord } from '../../model/call-record.js';
import type { CallStatus } from '../../model/call-status.js';
import { callRecordFixture } from '../../model/test-support/call-record-fixture.js';
import { openDatabase } from '../../store/database.js';
import type { CompanySettings } from '../../model/entities.js';
import { SqliteScheduleRepository } from '../../store/schedule-repository.js';
import { createStore, type Store } from '../../store/store.js';

export interface Kit {
  store: Store;
  clock: ManualClock;
  companyId: string;
  history: SqliteCallHistoryRepository;
  schedules: SqliteScheduleRepository;
  calls: Store['calls'];
  unitOfWork: Store['unitOfWork'];
  /** ProtectionDeps for evaluateProtections. */
  deps: { history: SqliteCallHistoryRepository; optOuts: Store['optOuts']; clock: ManualClock };
}

export function makeKit(
  opts: { path?: string; settings?: CompanySettings; now?: string; companyId?: string } = {},
): Kit {
  const store = createStore(openDatabase(opts.path ?? ':memory:'));
  const clock = new ManualClock(Date.parse(opts.now ?? '2026-03-10T15:00:00Z'));
  const existing = opts.companyId ? store.companies.get(opts.companyId) : undefined;
  const companyId =
    existing?.id ??
    new AccountService(store, clock).createCompany('acme', null, {}, opts.settings ?? {}).id;
  const history = new SqliteCallHistoryRepository(store.db, store.calls, store.optOuts);
  const schedules = new SqliteScheduleRepository(store.db);
  return {
    store,
    clock,
    companyId,
    history,
    schedules,
    calls: store.calls,
    unitOfWork: store.unitOfWork,
    deps: { history, optOuts: store.optOuts, clock },
  };
}

/** Inserts an outbound record; `at` (ISO) is its creation and modification time. */
export function addCall(
  kit: Kit,
  fields: Omit<Partial<CallRecord>, 'status'> & { status?: string; at?: string },
): CallRecord {
  const { at, status, ...rest } = fields;
  const statusOf = (status ?? 'to_be_processed') as CallStatus;
  const when = at ?? new Date(kit.clock.now()).toISOString();
  return kit.store.calls.insert(
    callRecordFixture({
      id: randomUUID(),
      companyId: kit.companyId,
      phoneNumber: '+12125551234',
      agentId: 'agent-1',
      createdAt: when,
      modifiedAt: when,
      ...rest,
      status: statusOf,
    }),
  );
}

/** An answered call that started at `startAt` and lasted `minutes`. */
export function addAnswered(kit: Kit, number: string, startAt: string, minutes = 2): CallRecord {
  const end = new Date(Date.parse(startAt) + minutes * 60_000).toISOString();
  return addCall(kit, {
    phoneNumber: number,
    status: 'answered',
    startAt,
    endAt: end,
    at: end,
    agentId: 'agent-old',
  });
}

/** A failed attempt (busy) that ended at `endAt`. */
export function addFailed(kit: Kit, number: string, endAt: string, status = 'busy'): CallRecord {
  return addCall(kit, { phoneNumber: number, status, endAt, at: endAt, agentId: 'agent-old' });
}
