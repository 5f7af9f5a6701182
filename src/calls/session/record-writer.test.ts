// The session's pen: what it stages rides on its next write, and the store
// is handed the record as last stored (never the staged one).
import { describe, expect, it } from 'vitest';
import type { CallPatch, CallRecord, CallUpdateOptions } from '../../model/call-record.js';
import { OPEN_STATUSES } from '../../model/call-status.js';
import { callRecordFixture } from '../../model/test-support/call-record-fixture.js';
import type { CallRepository } from '../ports/call-store.js';
import { RecordWriter } from './record-writer.js';

/** A one-record store that keeps every update it was asked for. */
function oneRecordStore(initial: CallRecord) {
  let stored = initial;
  const updates: { patch: CallPatch; opts: CallUpdateOptions; applied: boolean }[] = [];
  const calls = {
    update(_id: string, patch: CallPatch, at: string, opts: CallUpdateOptions = {}) {
      const applied = !opts.onlyFrom || opts.onlyFrom.includes(stored.status);
      updates.push({ patch, opts, applied });
      if (!applied) return undefined;
      stored = { ...stored, ...patch, modifiedAt: at } as CallRecord;
      return stored;
    },
  } as unknown as CallRepository;
  return {
    calls,
    updates,
    stored: () => stored,
    setStatus: (s: CallRecord['status']) => void (stored = { ...stored, status: s }),
  };
}

const clock = { now: () => Date.parse('2026-11-27T10:00:00.000Z') };
const initial = callRecordFixture({
  id: 'r1',
  companyId: 'co',
  phoneNumber: '+12125550001',
  status: 'trying',
});

describe('RecordWriter', () => {
  it('staged changes are seen at once and stored by the next write, in one update', () => {
    const store = oneRecordStore(initial);
    const w = new RecordWriter(store.calls, clock, initial);
    const agent = w.stageParticipant({
      type: 'ai',
      role: 'Agent',
      status: 'invited',
      invitedAt: 'x',
      initiator: true,
    });
    const callee = w.stageParticipant({
      type: 'trunk',
      role: 'Contact',
      status: 'invited',
      invitedAt: 'x',
      initiator: false,
    });
    w.stage(w.participantPatch(agent, { status: 'joined' }));
    w.stage({ endDetail: 'staged' }); // a field the next write's own patch does not carry
    expect(store.updates).toHaveLength(0);
    expect(w.current.participants.map((p) => p.status)).toEqual(['joined', 'invited']);

    expect(w.status('in_call', w.participantPatch(callee, { status: 'joined' }))).toBe(true);
    expect(store.updates).toHaveLength(1);
    expect(store.stored().status).toBe('in_call');
    expect(store.stored().endDetail).toBe('staged');
    expect(store.stored().participants.map((p) => [p.type, p.status])).toEqual([
      ['ai', 'joined'],
      ['trunk', 'joined'],
    ]);
    // the store was handed the record as last stored: no participants yet
    expect(store.updates[0]!.opts.current).toBe(initial);
    expect(store.updates[0]!.opts.ownedOnly).toBe(true);

    const afterAnswer = store.stored();
    w.write({ summary: 'x' });
    expect(store.updates).toHaveLength(2);
    expect(store.updates[1]!.patch).toEqual({ summary: 'x' }); // nothing staged is sent twice
    expect(store.updates[1]!.opts.current).toBe(afterAnswer);
  });

  it('a write refused by a narrower onlyFrom while the record is open still stores what was staged', () => {
    const store = oneRecordStore(initial);
    const w = new RecordWriter(store.calls, clock, initial);
    w.stageParticipant({
      type: 'ai',
      role: 'Agent',
      status: 'invited',
      invitedAt: 'x',
      initiator: true,
    });
    expect(w.status('ringing', {}, undefined, ['to_be_processed'])).toBe(false);
    expect(store.updates.map((u) => [u.applied, u.opts.onlyFrom])).toEqual([
      [false, ['to_be_processed']],
      [true, OPEN_STATUSES],
    ]);
    expect(store.stored()).toMatchObject({ status: 'trying', participants: [{ type: 'ai' }] });
  });

  it('on a record already final, the write and what was staged are dropped, and nothing is retried', () => {
    const store = oneRecordStore(initial);
    const w = new RecordWriter(store.calls, clock, initial);
    store.setStatus('cancelled'); // another writer ended it
    w.stage({ summary: 'staged' });
    expect(w.status('answered')).toBe(false);
    expect(store.updates).toHaveLength(1);
    expect(store.stored()).toMatchObject({ status: 'cancelled' });
    expect(store.stored().summary).toBeUndefined();
  });
});
