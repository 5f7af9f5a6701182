// The WAL checkpointer's thread (wal-checkpointer.ts): its own connection to
// the daemon's SQLite file, and on each request one PASSIVE checkpoint
// (https://sqlite.org/pragma.html#pragma_wal_checkpoint): the WAL's frames
// copied into the database as far as no reader still needs them, without
// waiting for any lock. Under synchronous=NORMAL a checkpoint syncs the WAL
// before and the database after (https://sqlite.org/pragma.html#pragma_synchronous):
// those fsyncs, and the page copy, happen here, off the event loop.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointReply, CheckpointWorkerData } from './wal-checkpointer.js';

const { path } = workerData as CheckpointWorkerData;
const db = new Database(path);
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 0'); // PASSIVE never waits; nothing else here takes a lock
db.pragma('wal_autocheckpoint = 0');

parentPort!.on('message', (m: 'checkpoint' | 'close') => {
  if (m === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  const started = performance.now();
  let reply: CheckpointReply;
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)') as {
      busy: number;
      log: number;
      checkpointed: number;
    }[];
    reply = {
      ms: performance.now() - started,
      walFrames: row?.log ?? 0,
      checkpointed: row?.checkpointed ?? 0,
    };
  } catch (err) {
    reply = { ms: performance.now() - started, error: String(err) };
  }
  parentPort!.postMessage(reply);
});
