import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { openDatabase } from './database.js';
import { SCHEMA_VERSION } from './migrations.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import { createStore } from './store.js';

describe('openDatabase on a real file', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-db-')), 'nested', 'gateway.sqlite');

  it('uses WAL with synchronous=NORMAL (the store fsyncs in groups) and migrates to the current version', () => {
    const db = openDatabase(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('keeps what was written across a reopen, and migrating again changes nothing', () => {
    const clock = new ManualClock();
    let db = openDatabase(path);
    const store = createStore(db);
    const accounts = new AccountService(store, clock);
    const company = accounts.bootstrap('boot-key')!;
    expect(accounts.bootstrap('boot-key')).toBeUndefined();
    store.calls.insert(
      callRecordFixture({
        id: 'c1',
        callId: 'k1',
        companyId: company.id,
        phoneNumber: '+12125551234',
        agentId: null,
        status: 'to_be_processed',
        scheduledAt: null,
        createdAt: 'a',
        modifiedAt: 'a',
        metadata: { x: '1' },
      }),
    );
    store.calls.update('c1', { status: 'trying' }, 'b');
    db.close();

    db = openDatabase(path);
    const again = createStore(db);
    expect(again.companies.all().map((c) => c.name)).toEqual(['default']);
    expect(again.calls.getById('c1')).toMatchObject({ status: 'trying', metadata: { x: '1' } });
    expect(again.calls.events('c1').map((e) => e.status)).toEqual(['to_be_processed', 'trying']);
    db.close();
  });

  it('never moves a call out of a status the caller did not allow', () => {
    const store = createStore(openDatabase(':memory:'));
    const company = new AccountService(store, new ManualClock()).createCompany('x');
    store.calls.insert(
      callRecordFixture({
        id: 'c',
        callId: 'k',
        companyId: company.id,
        phoneNumber: '+1',
        agentId: null,
        status: 'answered',
        scheduledAt: null,
        createdAt: 'a',
        modifiedAt: 'a',
      }),
    );
    expect(
      store.calls.update('c', { status: 'failed' }, 'b', { onlyFrom: ['trying', 'ringing'] }),
    ).toBeUndefined();
    expect(store.calls.getById('c')!.status).toBe('answered');
  });

  it('commits without an fsync on the event loop; durable() fsyncs the WAL once for all that was committed since; kept on reopen', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gw-db-')), 'sync.sqlite');
    let db = openDatabase(file);
    const store = createStore(db, { timed: true });
    const company = new AccountService(store, new ManualClock()).createCompany('x');
    store.calls.insert(
      callRecordFixture({
        id: 'c',
        callId: 'k',
        companyId: company.id,
        phoneNumber: '+1',
        agentId: null,
        status: 'in_call',
        scheduledAt: null,
        createdAt: 'a',
        modifiedAt: 'a',
      }),
    );
    const pragma = vi.spyOn(db, 'pragma');
    await store.unitOfWork.durable();
    const fsyncs = () => store.writeTimings!.fsyncs.snapshot().count;
    const synced = fsyncs();
    expect(synced).toBeGreaterThanOrEqual(1);
    store.calls.update(
      'c',
      {
        networkQuality: {
          packetsReceived: 5,
          packetsLost: 0,
          lossPct: 0,
          packetsOutOfOrder: 0,
          jitterMs: 0,
        },
      },
      'b',
    );
    store.calls.update('c', { status: 'answered' }, 'c');
    db.transaction(() => store.calls.update('c', { summary: 's' }, 'd'))();
    // every commit under NORMAL: no level switched, nothing fsynced yet
    expect(pragma).not.toHaveBeenCalled();
    expect(store.writeTimings!.commitsFull.snapshot().count).toBe(0);
    expect(fsyncs()).toBe(synced);
    // one fsync for the three, and none again while nothing new is committed
    await Promise.all([store.unitOfWork.durable(), store.unitOfWork.durable()]);
    expect(fsyncs()).toBe(synced + 1);
    await store.unitOfWork.durable();
    expect(fsyncs()).toBe(synced + 1);
    // runDurable answers after its own fsync
    await store.unitOfWork.runDurable(() => store.calls.update('c', { summary: 't' }, 'e'));
    expect(fsyncs()).toBe(synced + 2);
    db.close();

    db = openDatabase(file);
    expect(createStore(db).calls.getById('c')).toMatchObject({
      status: 'answered',
      networkQuality: { packetsReceived: 5 },
      summary: 't',
    });
    db.close();
  });
});
