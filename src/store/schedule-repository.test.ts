import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { openDatabase } from './database.js';
import { SqliteScheduleRepository } from './schedule-repository.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import { createStore } from './store.js';

function setup() {
  const store = createStore(openDatabase(':memory:'));
  const company = new AccountService(store, new ManualClock()).createCompany('x');
  const id = randomUUID();
  store.calls.insert(
    callRecordFixture({
      id,
      callId: randomUUID(),
      companyId: company.id,
      phoneNumber: '+12125551234',
      agentId: null,
      status: 'scheduled',
      scheduledAt: null,
      createdAt: 'a',
      modifiedAt: 'a',
      additionalPhoneNumbers: ['+12125550000'],
    }),
  );
  const repo = new SqliteScheduleRepository(store.db);
  const row = repo.insert(
    {
      callRecordId: id,
      companyId: company.id,
      dueAt: 1000,
      kind: 'initial',
      attempt: 1,
      idempotencyKey: `${id}:1`,
    },
    'a',
  )!;
  return { store, repo, row, id };
}

describe('SqliteScheduleRepository', () => {
  it('refuses a second row with the same idempotency key', () => {
    const { repo, row, id } = setup();
    expect(row.state).toBe('pending');
    expect(
      repo.insert(
        {
          callRecordId: id,
          companyId: row.companyId,
          dueAt: 5,
          kind: 'retry',
          attempt: 1,
          idempotencyKey: `${id}:1`,
        },
        'b',
      ),
    ).toBeUndefined();
  });

  it('claims a due row once; re-claims it only after the lease expired; never once dispatched', () => {
    const { repo, row } = setup();
    expect(repo.claimDue('a', 999, 100, 10, 't')).toEqual([]);
    expect(repo.claimDue('a', 1000, 100, 10, 't').map((r) => r.id)).toEqual([row.id]);
    expect(repo.claimDue('b', 1100, 100, 10, 't')).toEqual([]);
    expect(repo.claimDue('b', 1101, 100, 10, 't')[0]).toMatchObject({ leaseOwner: 'b', claims: 2 });
    expect(repo.markDispatched(row.id, 'a', 1102, 't')).toBe(false); // lease lost
    expect(repo.markDispatched(row.id, 'b', 1102, 't')).toBe(true);
    expect(repo.claimDue('c', 10_000, 100, 10, 't')).toEqual([]);
    expect(repo.finish(row.id, 'done', 'dialed', 't')).toBe(true);
    expect(repo.get(row.id)).toMatchObject({ state: 'done', leaseOwner: null });
  });

  it('cancels the rows of a record not yet dispatched', () => {
    const { repo, row, id } = setup();
    expect(repo.cancelForCall(id, 'hangup', 't')).toBe(1);
    expect(repo.get(row.id)!.state).toBe('cancelled');
    expect(repo.nextDueAt()).toBeUndefined();
  });

  it('migration 2 indexes a record under its own number and its alternates', () => {
    const { store, id } = setup();
    const rows = store.db
      .prepare(
        'SELECT phone_number FROM call_numbers WHERE call_record_id = ? ORDER BY phone_number',
      )
      .all(id);
    expect(rows).toEqual([{ phone_number: '+12125550000' }, { phone_number: '+12125551234' }]);
  });
});
