import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Db } from './database.js';
import { timeWrites } from './sqlite-write-timings.js';

/** A real file (WAL, synchronous=FULL set here) with one table, timed by a clock that moves 1 ms a read. */
function timedDb() {
  const db: Db = openDatabase(join(mkdtempSync(join(tmpdir(), 'gw-timings-')), 'g.sqlite'));
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  let ms = 0;
  const t = timeWrites(db, () => (ms += 1));
  const counts = () => ({
    writes: t.writes.snapshot().count,
    full: t.commitsFull.snapshot().count,
    normal: t.commitsNormal.snapshot().count,
  });
  return { db, t, counts };
}

describe('timeWrites on a real SQLite file', () => {
  it('a write outside any transaction is one write and one FULL commit; reads are not counted', () => {
    const { db, t, counts } = timedDb();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    expect(insert.run('a').changes).toBe(1);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
    expect(counts()).toEqual({ writes: 1, full: 1, normal: 0 });
    // the clock moved 1 ms between the two reads around the run
    expect(t.writes.snapshot().sumMs).toBe(1);
    db.close();
  });

  it('a transaction of three writes (one in a savepoint) is three writes and one commit, timed from BEGIN to COMMIT', () => {
    const { db, t, counts } = timedDb();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const nested = db.transaction(() => insert.run('c'));
    db.transaction(() => {
      insert.run('a');
      insert.run('b');
      nested();
    })();
    expect(counts()).toEqual({ writes: 3, full: 1, normal: 0 });
    // 2 clock reads per write inside: the commit's end read is the 8th
    expect(t.commitsFull.snapshot().sumMs).toBe(7);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 3 });
    db.close();
  });

  it('commits under NORMAL are counted apart from those under FULL', () => {
    const { db, counts } = timedDb();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    insert.run('a');
    db.pragma('synchronous = NORMAL');
    insert.run('b');
    db.transaction(() => insert.run('c'))();
    expect(counts()).toEqual({ writes: 3, full: 1, normal: 2 });
    db.close();
  });

  it('a write with RETURNING (read through get) is counted as a write', () => {
    const { db, counts } = timedDb();
    expect(db.prepare('INSERT INTO t (v) VALUES (?) RETURNING id').get('a')).toEqual({ id: 1 });
    expect(counts()).toEqual({ writes: 1, full: 1, normal: 0 });
    db.close();
  });

  it('a transaction that throws is rolled back and not counted as a commit; the variants still work', () => {
    const { db, counts } = timedDb();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const failing = db.transaction(() => {
      insert.run('a');
      throw new Error('no');
    });
    expect(() => failing()).toThrow('no');
    expect(counts()).toEqual({ writes: 1, full: 0, normal: 0 });
    db.transaction(() => insert.run('b')).immediate();
    expect(db.prepare('SELECT v FROM t').all()).toEqual([{ v: 'b' }]);
    db.close();
  });
});
