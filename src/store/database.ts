// Opens the SQLite file the way the reliability rules ask: WAL journal and
// synchronous=FULL, so an acknowledged call, schedule or status change
// survives kill -9; then brings the schema up to date. Refreshes that are
// not acknowledged state may commit without an fsync (`withoutFsync`).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrations.js';

export type Db = Database.Database;

export function openDatabase(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}

/**
 * Runs `fn` as a transaction committed with synchronous=NORMAL: in WAL mode
 * the commit writes the WAL without an fsync, so it survives kill -9 (the
 * write reached the OS) and becomes power-safe with the next FULL commit,
 * which syncs the whole WAL (https://sqlite.org/pragma.html#pragma_synchronous).
 * For record refreshes that are not a status change: an fsync blocks the
 * event loop for milliseconds, and media pacing shares that loop.
 */
export function withoutFsync<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return db.transaction(fn)(); // the outer commit decides
  db.pragma('synchronous = NORMAL');
  try {
    return db.transaction(fn)();
  } finally {
    db.pragma('synchronous = FULL');
  }
}
