// The live dialog repository's contract, once per store: SQLite (the
// embedded default) and PostgreSQL (a throw-away server). The same
// expectations hold for both, types included (CSeq and port as numbers, the
// route set as an array) and the order of `list` (text in byte order).
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Async } from '../../src/calls/ports/async.js';
import type { LiveDialogRepository } from '../../src/calls/ports/call-store.js';
import type { Db } from '../../src/store/database.js';
import type { StoredDialog } from '../../src/store/live-dialog-repository.js';
import { SqliteLiveDialogRepository } from '../../src/store/live-dialog-repository.js';
import { PgLiveDialogRepository } from '../../src/store/pg/pg-live-dialog-repository.js';
import type pg from 'pg';
import {
  postgresDatabase,
  promised,
  sqliteDatabase,
  usePostgresServer,
} from '../support/store-under-test.js';

type Repo = Async<LiveDialogRepository>;

/** Call records the dialogs may belong to (the foreign key). */
const RECORDS = ['c1', 'c2', 'c-B', 'c-a'];

interface StoreUnderTest {
  repo: Repo;
  /** Deletes a call record (its dialogs go with it). */
  deleteRecord(id: string): Promise<void>;
}

interface StoreKind {
  open(): Promise<void>;
  /** An empty store with a company and the RECORDS. */
  fresh(): Promise<StoreUnderTest>;
}

const SEED_COMPANY = `INSERT INTO companies (id, name, created_at) VALUES ('co', 'Co', 'x')`;

function seedSqlite(db: Db): void {
  db.prepare(SEED_COMPANY).run();
  const insert = db.prepare(`INSERT INTO calls (id, call_id, company_id, phone_number, status,
    created_at, modified_at, data) VALUES (?, ?, 'co', '+12125551234', 'in_call', 'x', 'x', '{}')`);
  for (const id of RECORDS) insert.run(id, `k-${id}`);
}

const sqlite: StoreKind = {
  open: async () => undefined,
  fresh: async () => {
    const db = sqliteDatabase();
    seedSqlite(db);
    return {
      repo: promised(new SqliteLiveDialogRepository(db)),
      deleteRecord: async (id) => {
        db.prepare('DELETE FROM calls WHERE id = ?').run(id);
      },
    };
  },
};

const pgServer = usePostgresServer();
const { pools } = pgServer;

function postgres(): StoreKind {
  let pool: pg.Pool;
  return {
    open: async () => {
      ({ pool } = await postgresDatabase(pgServer.server, pools));
    },
    fresh: async () => {
      await pool.query('TRUNCATE live_dialogs, calls, companies CASCADE');
      await pool.query(SEED_COMPANY);
      for (const id of RECORDS)
        await pool.query(
          `INSERT INTO calls (id, call_id, company_id, phone_number, status, created_at, modified_at, data)
           VALUES ($1, $2, 'co', '+12125551234', 'in_call', 'x', 'x', '{}')`,
          [id, `k-${id}`],
        );
      return {
        repo: new PgLiveDialogRepository(pool),
        deleteRecord: async (id) => {
          await pool.query('DELETE FROM calls WHERE id = $1', [id]);
        },
      };
    },
  };
}

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

/** A call's outcome as a promise: `promised` throws a SQLite error synchronously, PostgreSQL rejects. */
const settled = <T>(f: () => Promise<T>): Promise<T> => Promise.resolve().then(f);

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;

describe.each([
  ['SQLite', sqlite],
  ['PostgreSQL', postgres()],
] as const)('live dialog repository contract on %s', (_name, kind) => {
  let s: StoreUnderTest;
  beforeAll(async () => {
    await kind.open();
  }, 30_000);
  beforeEach(async () => {
    s = await kind.fresh();
  });

  it('keeps nothing at first', async () => {
    expect(await s.repo.list()).toStrictEqual([]);
  });

  it("round-trips a dialog as the callee's, numbers as numbers and the route set as an array", async () => {
    await s.repo.save('c1', dialog, at(0));
    const listed = await s.repo.list();
    expect(listed).toStrictEqual([{ callRecordId: 'c1', leg: 'callee', dialog }]);
    expect(typeof listed[0]!.dialog.localSeq).toBe('number');
    expect(typeof listed[0]!.dialog.destination.port).toBe('number');
  });

  it('keeps an empty route set, the highest CSeq RFC 3261 allows, and each transport', async () => {
    const tls = { ...dialog, routeSet: [], localSeq: 2 ** 31 - 1, transport: 'tls' as const };
    const udp = { ...dialog, callId: 'u@gw', transport: 'udp' as const };
    await s.repo.save('c1', tls, at(0));
    await s.repo.save('c2', udp, at(1));
    expect(await s.repo.list()).toStrictEqual([
      { callRecordId: 'c1', leg: 'callee', dialog: tls },
      { callRecordId: 'c2', leg: 'callee', dialog: udp },
    ]);
  });

  it('a second save of the same record and leg replaces it, keeping its place in the order', async () => {
    await s.repo.save('c1', dialog, at(0));
    await s.repo.save('c2', { ...dialog, callId: 'other' }, at(1));
    const replaced = {
      ...dialog,
      localSeq: 9,
      remoteTarget: 'sip:moved@192.0.2.8',
      routeSet: ['<sip:c.example;lr>'],
      destination: { host: '192.0.2.9', port: 5080 },
    };
    await s.repo.save('c1', replaced, at(2));
    expect(await s.repo.list()).toStrictEqual([
      { callRecordId: 'c1', leg: 'callee', dialog: replaced },
      { callRecordId: 'c2', leg: 'callee', dialog: { ...dialog, callId: 'other' } },
    ]);
  });

  it('lists oldest first, then by record id in byte order, then by leg', async () => {
    await s.repo.save('c2', dialog, at(5));
    await s.repo.save('c-a', dialog, at(1), 'transfer_target');
    await s.repo.save('c-a', dialog, at(1));
    await s.repo.save('c-B', dialog, at(1));
    await s.repo.save('c1', dialog, at(3));
    expect((await s.repo.list()).map((d) => [d.callRecordId, d.leg])).toEqual([
      ['c-B', 'callee'], // 'B' (0x42) sorts before 'a' (0x61), as SQLite compares bytes
      ['c-a', 'callee'],
      ['c-a', 'transfer_target'],
      ['c1', 'callee'],
      ['c2', 'callee'],
    ]);
  });

  it("a transfer target's dialog is kept beside the callee's and removed on its own", async () => {
    const target = { ...dialog, callId: 'target@gw' };
    await s.repo.save('c1', dialog, at(0));
    await s.repo.save('c1', target, at(1), 'transfer_target');
    await s.repo.save('c2', dialog, at(2), 'transfer_target');
    expect((await s.repo.list()).map((d) => [d.callRecordId, d.leg, d.dialog.callId])).toEqual([
      ['c1', 'callee', 'abc@gw'],
      ['c1', 'transfer_target', 'target@gw'],
      ['c2', 'transfer_target', 'abc@gw'],
    ]);
    await s.repo.remove('c1', 'transfer_target');
    expect((await s.repo.list()).map((d) => [d.callRecordId, d.leg])).toEqual([
      ['c1', 'callee'],
      ['c2', 'transfer_target'],
    ]);
  });

  it("remove without a leg takes every one of the record's dialogs, and no other record's", async () => {
    await s.repo.save('c1', dialog, at(0));
    await s.repo.save('c1', dialog, at(1), 'transfer_target');
    await s.repo.save('c2', dialog, at(2));
    await s.repo.remove('c1');
    expect((await s.repo.list()).map((d) => [d.callRecordId, d.leg])).toEqual([['c2', 'callee']]);
  });

  it('removing what is not kept does nothing', async () => {
    await s.repo.save('c1', dialog, at(0));
    await expect(s.repo.remove('c2')).resolves.toBeUndefined();
    await expect(s.repo.remove('c1', 'transfer_target')).resolves.toBeUndefined();
    await expect(s.repo.remove('no-such-record')).resolves.toBeUndefined();
    expect(await s.repo.list()).toHaveLength(1);
  });

  it('a dialog goes with its call record, and needs one', async () => {
    await s.repo.save('c1', dialog, at(0));
    await s.repo.save('c2', dialog, at(1), 'transfer_target');
    await s.deleteRecord('c1');
    expect((await s.repo.list()).map((d) => d.callRecordId)).toEqual(['c2']);
    await expect(settled(() => s.repo.save('no-such-record', dialog, at(2)))).rejects.toThrow(
      /foreign key/i,
    );
  });

  it('refuses a transport or leg outside the schema', async () => {
    await expect(
      settled(() => s.repo.save('c1', { ...dialog, transport: 'sctp' as never }, at(0))),
    ).rejects.toThrow(/constraint/i);
    await expect(
      settled(() => s.repo.save('c1', dialog, at(0), 'referrer' as never)),
    ).rejects.toThrow(/constraint/i);
    expect(await s.repo.list()).toStrictEqual([]);
  });
});
