// Opens the SQLite file the way the reliability rules ask: WAL journal, so a
// commit survives kill -9 as soon as it returns, and synchronous=NORMAL: the
// commit does not fsync on the event loop; the store fsyncs the WAL in
// groups, off the loop, and whatever acknowledges a write waits for that
// (wal-sync.ts, docs/decisions/group-commit.md). Then brings the schema up
// to date.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrations.js';

export type Db = Database.Database;

export function openDatabase(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
}
