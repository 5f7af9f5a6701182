// The WAL checkpointed by a worker thread, never by a commit on the daemon's
// connection, on a real file.
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createStore } from './store.js';
import { WalCheckpointer } from './wal-checkpointer.js';

const PAGE = 4096;
/** SQLite's own automatic checkpoint threshold, in pages (https://sqlite.org/wal.html). */
const AUTO_CHECKPOINT_PAGES = 1000;

function filledDb() {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-ckpt-')), 'g.sqlite');
  const db = openDatabase(path);
  db.exec('CREATE TABLE filler (v TEXT)');
  const insert = db.prepare('INSERT INTO filler (v) VALUES (?)');
  /** Commits about `pages` pages of new rows, one small transaction at a time. */
  const fill = (pages: number) => {
    for (let i = 0; i < pages; i++) insert.run('x'.repeat(PAGE - 200));
  };
  const walPages = () => statSync(`${path}-wal`).size / PAGE;
  return { db, path, fill, walPages };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('WalCheckpointer', () => {
  it("with the store's checkpointInWorker, commits never checkpoint: the WAL grows past SQLite's 1,000 pages until checkpoint() asks", async () => {
    const { db, path, fill, walPages } = filledDb();
    const store = createStore(db, { timed: true, checkpointInWorker: true });
    fill(1500);
    expect(walPages()).toBeGreaterThan(1.3 * AUTO_CHECKPOINT_PAGES);

    const before = store.writeTimings!.checkpoints.snapshot().count;
    store.checkpoint!();
    await until(() => store.writeTimings!.checkpoints.snapshot().count > before);
    // Checkpointed: the next commits restart the WAL from its start instead of growing it.
    const grown = walPages();
    fill(200);
    expect(walPages()).toBeLessThanOrEqual(grown);
    // Everything committed reads back from a connection of its own.
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(1700);
    reader.close();
    store.close();
  });

  it('a worker that cannot open the file reports it through onError, and close() still returns', async () => {
    const errors: string[] = [];
    const missing = join(tmpdir(), 'gw-ckpt-none', 'missing', 'g.sqlite');
    const checkpointer = new WalCheckpointer(missing, {
      onError: (message) => errors.push(message),
    });
    await until(() => errors.length > 0);
    expect(errors[0]).toMatch(/directory|open/i);
    await new Promise((r) => setTimeout(r, 100)); // the thread has ended by now
    await checkpointer.close();
  });

  it('a checkpoint copies every WAL frame no reader needs; one runs at a time; close() ends the thread', async () => {
    const { db, path, fill } = filledDb();
    db.pragma('wal_autocheckpoint = 0');
    const checkpointer = new WalCheckpointer(path);
    fill(300);
    checkpointer.checkpoint();
    checkpointer.checkpoint(); // still running: not asked twice
    await until(() => checkpointer.answered > 0);
    await new Promise((r) => setTimeout(r, 50));
    expect(checkpointer.answered).toBe(1);
    expect(checkpointer.last!.walFrames).toBeGreaterThanOrEqual(300);
    expect(checkpointer.last!.checkpointed).toBe(checkpointer.last!.walFrames);

    // A reader holding an old snapshot keeps the frames after it out of the database.
    const reader = new Database(path, { readonly: true });
    reader.pragma('journal_mode'); // the reader joins WAL mode
    const snapshot = reader.prepare('SELECT count(*) FROM filler').pluck();
    reader.exec('BEGIN');
    expect(snapshot.get()).toBe(300);
    fill(100);
    checkpointer.checkpoint();
    await until(() => checkpointer.answered > 1);
    expect(checkpointer.last!.checkpointed).toBeLessThan(checkpointer.last!.walFrames);
    reader.exec('COMMIT');
    reader.close();

    await checkpointer.close();
    checkpointer.checkpoint(); // closed: nothing asked, nothing thrown
    expect(checkpointer.answered).toBe(2);
    db.close();
  });
});
