// The dialogs kept for a BYE after a crash: a round trip through SQLite,
// replaced per call record, and gone with the record.
import { describe, expect, it } from 'vitest';
import { AccountService } from '../accounts/account-service.js';
import { ManualClock } from '../clock.js';
import { callRecordFixture } from '../model/test-support/call-record-fixture.js';
import { openDatabase } from './database.js';
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
      { callRecordId: 'c1', dialog },
      { callRecordId: 'c2', dialog: { ...dialog, callId: 'other' } },
    ]);
    store.dialogs.save('c1', { ...dialog, localSeq: 9 }, '2026-01-01T00:00:02.000Z');
    expect(store.dialogs.list()[0]!.dialog.localSeq).toBe(9);
    store.dialogs.remove('c1');
    expect(store.dialogs.list().map((d) => d.callRecordId)).toEqual(['c2']);
    store.db.prepare('DELETE FROM calls WHERE id = ?').run('c2');
    expect(store.dialogs.list()).toEqual([]);
  });
});
