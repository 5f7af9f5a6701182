import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreNotDurableError, WalSync } from './wal-sync.js';

/** A WAL-mode file with synchronous=NORMAL, as the daemon opens it, and its WalSync counting fsyncs. */
function walDb(path = join(mkdtempSync(join(tmpdir(), 'gw-wal-')), 'g.sqlite')) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');
  const total = db.prepare('SELECT total_changes()').pluck();
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const fsyncs: number[] = [];
  const wal = new WalSync({
    walPath: `${path}-wal`,
    changes: () => total.get() as number,
    onSynced: (ms) => fsyncs.push(ms),
  });
  return { db, path, wal, fsyncs, write: () => insert.run('x') };
}

describe('WalSync: group commit of the WAL file', () => {
  it('fsyncs only when something was committed since the last fsync', async () => {
    const { db, wal, fsyncs, write } = walDb();
    const before = fsyncs.length;
    await wal.sync(); // the CREATE TABLE: not a row change, nothing to sync
    expect(fsyncs.length).toBe(before);
    write();
    await wal.sync();
    expect(fsyncs).toHaveLength(before + 1);
    await wal.sync();
    expect(fsyncs).toHaveLength(before + 1);
    await wal.close();
    db.close();
  });

  it('callers who arrive while an fsync runs share the next one; those it already covers share it', async () => {
    const { db, wal, fsyncs, write } = walDb();
    write();
    const first = wal.sync();
    const coveredByFirst = wal.sync(); // nothing committed since the first started
    write();
    const later = Array.from({ length: 5 }, () => wal.sync());
    expect(later.every((p) => p === later[0])).toBe(true);
    expect(coveredByFirst).toBe(first);
    await Promise.all([first, coveredByFirst, ...later]);
    expect(fsyncs).toHaveLength(2);
    // and the next commit after all of them gets its own
    write();
    await wal.sync();
    expect(fsyncs).toHaveLength(3);
    await wal.close();
    db.close();
  });

  it('follows the WAL file when SQLite replaces it (the last connection closed, a new one opened)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-wal-')), 'g.sqlite');
    let current = walDb(path);
    const fsyncs: number[] = [];
    const wal = new WalSync({
      walPath: `${path}-wal`,
      changes: () => current.db.prepare('SELECT total_changes()').pluck().get() as number,
      onSynced: (ms) => fsyncs.push(ms),
    });
    current.write();
    await wal.sync();
    // held open by the WalSync, the old file keeps its inode: the new one gets another
    const firstIno = statSync(`${path}-wal`).ino;
    await current.wal.close();
    current.db.close(); // SQLite checkpoints and deletes the WAL
    current = walDb(path);
    current.write();
    current.write();
    expect(statSync(`${path}-wal`).ino).not.toBe(firstIno);
    await wal.sync();
    expect(fsyncs).toHaveLength(2);
    expect((wal as unknown as { handle: { ino: number } }).handle.ino).toBe(
      statSync(`${path}-wal`).ino,
    );
    await Promise.all([wal.close(), current.wal.close()]);
    current.db.close();
  });

  it('has nothing to sync before the WAL exists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-wal-'));
    const fsyncs: number[] = [];
    const wal = new WalSync({
      walPath: join(dir, 'none.sqlite-wal'),
      changes: () => 3,
      onSynced: (ms) => fsyncs.push(ms),
    });
    await wal.sync();
    expect(fsyncs).toHaveLength(1); // counted as done: nothing was there to sync
    await wal.close();
  });

  it('a failing sync rejects with StoreNotDurableError (the API answers 503) and leaves nothing marked synced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-wal-'));
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'x');
    // a path under a regular file: stat fails with ENOTDIR
    const wal = new WalSync({ walPath: join(file, 'g.sqlite-wal'), changes: () => 1 });
    const failed = await wal.sync().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreNotDurableError);
    expect((failed as Error).message).toContain('ENOTDIR');
    // still owed: the next call tries again
    await expect(wal.sync()).rejects.toBeInstanceOf(StoreNotDurableError);
    await wal.close();
  });
});
