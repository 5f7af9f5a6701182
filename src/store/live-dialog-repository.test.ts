// The dialogs kept for a BYE after a crash: a round trip through SQLite,
// replaced per call record, and gone with the record.
import { describe, expect, it } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import Database from 'better-sqlite3';
import { openDatabase } from './database.js';
import { migrate, MIGRATIONS } from './migrations.js';
import type { StoredDialog } from './live-dialog-repository.js';
import { createStore } from './store.js';

const dialog: StoredDialog = {
  callId: 'abc@gw',
  localTag: 'l1',
  remoteTag: 'r1',
  localParty: '"Gateway" <sip:+12125550100@gw>;tag=l1',
  remoteParty: '<sip:+12125551234@carrier>;tag=r1',
  remoteTarget: 'sip:far@192.0.2.7:5070;transport=tcp',
  routeSet: ['<sip:a.example;lr>', '<sip:b.example;lr>'],
  localSeq: 3,
  transport: 'tcp',
  destination: { host: '192.0.2.1', port: 5060 },
};

describe('live dialogs', () => {
  it('round-trips, is replaced per call record, removed, and cascades with the record', () => {
    const store = createStore(openDatabase(':memory:'));
    const company = new AccountService(store, new ManualClock()).createCompany('x');
    for (const id of ['c1', 'c2'])
      store.calls.insert(
        callRecordFixture({
          id,
          callId: `k-${id}`,
          companyId: company.id,
          phoneNumber: '+12125551234',
          agentId: null,
          status: 'in_call',
          scheduledAt: null,
          createdAt: 'a',
          modifiedAt: 'a',
        }),
      );
    store.dialogs.save('c1', dialog, '2026-01-01T00:00:00.000Z');
    store.dialogs.save('c2', { ...dialog, callId: 'other' }, '2026-01-01T00:00:01.000Z');
    expect(store.dialogs.list()).toEqual([
      { callRecordId: 'c1', leg: 'callee', dialog },
      { callRecordId: 'c2', leg: 'callee', dialog: { ...dialog, callId: 'other' } },
    ]);
    store.dialogs.save('c1', { ...dialog, localSeq: 9 }, '2026-01-01T00:00:02.000Z');
    expect(store.dialogs.list()[0]!.dialog.localSeq).toBe(9);
    store.dialogs.remove('c1');
    expect(store.dialogs.list().map((d) => d.callRecordId)).toEqual(['c2']);
    store.db.prepare('DELETE FROM calls WHERE id = ?').run('c2');
    expect(store.dialogs.list()).toEqual([]);
  });

  it("a transfer target's dialog is kept beside the callee's; removed on its own, or with the record's", () => {
    const store = createStore(openDatabase(':memory:'));
    const company = new AccountService(store, new ManualClock()).createCompany('x');
    store.calls.insert(
      callRecordFixture({
        id: 'c1',
        callId: 'k-c1',
        companyId: company.id,
        phoneNumber: '+12125551234',
        agentId: null,
        status: 'transferring',
        scheduledAt: null,
        createdAt: 'a',
        modifiedAt: 'a',
      }),
    );
    const target = { ...dialog, callId: 'target@gw' };
    store.dialogs.save('c1', dialog, '2026-01-01T00:00:00.000Z');
    store.dialogs.save('c1', target, '2026-01-01T00:00:01.000Z', 'transfer_target');
    expect(store.dialogs.list().map((d) => [d.leg, d.dialog.callId])).toEqual([
      ['callee', 'abc@gw'],
      ['transfer_target', 'target@gw'],
    ]);
    store.dialogs.remove('c1', 'transfer_target');
    expect(store.dialogs.list().map((d) => d.leg)).toEqual(['callee']);
    store.dialogs.save('c1', target, '2026-01-01T00:00:02.000Z', 'transfer_target');
    store.dialogs.remove('c1');
    expect(store.dialogs.list()).toEqual([]);
  });

  it('a database of schema 3 keeps its dialogs through migration 4, as the callee leg', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = OFF'); // a dialog row without its call row: only the migration is under test
    for (const m of MIGRATIONS.filter((x) => x.version <= 3)) db.exec(m.sql);
    db.pragma('user_version = 3');
    db.prepare(
      `INSERT INTO live_dialogs (call_record_id, sip_call_id, local_tag, remote_tag, local_party,
        remote_party, remote_target, route_set, local_cseq, transport, dest_host, dest_port,
        created_at, modified_at) VALUES ('c1', 'abc@gw', 'l1', 'r1', 'f', 't', 'sip:far', '[]', 3,
        'udp', '192.0.2.1', 5060, 'a', 'a')`,
    ).run();
    migrate(db);
    expect(db.prepare('SELECT call_record_id, leg, sip_call_id FROM live_dialogs').all()).toEqual([
      { call_record_id: 'c1', leg: 'callee', sip_call_id: 'abc@gw' },
    ]);
  });
});
