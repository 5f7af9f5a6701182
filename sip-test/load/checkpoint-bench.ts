// Micro-benchmark: what SQLite's automatic WAL checkpoints cost the
// connection that commits (docs/decisions/group-commit.md, "Checkpoints").
// The daemon's kind of commit (WAL, synchronous=NORMAL, a ~2.5 kB JSON row
// inserted or rewritten per transaction) on a real file in the system's
// temporary directory, with SQLite's default of a checkpoint every 1,000
// pages on the committing connection, then with none there (what the
// daemon does: a worker thread checkpoints). Prints each commit's time
// (median, p99, p99.9, max), the total, and the commits over 5 ms.
//   npx tsx sip-test/load/checkpoint-bench.ts [--commits 30000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const { values } = parseArgs({ options: { commits: { type: 'string', default: '30000' } } });
const COMMITS = Number(values.commits);
const dir = mkdtempSync(join(tmpdir(), 'gw-ckpt-bench-'));

function run(autoCheckpointPages: number): void {
  const db = new Database(join(dir, `t-${autoCheckpointPages}.sqlite`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${autoCheckpointPages}`);
  db.exec('CREATE TABLE calls (id TEXT PRIMARY KEY, data TEXT)');
  const insert = db.prepare('INSERT INTO calls VALUES (?, ?)');
  const update = db.prepare('UPDATE calls SET data = ? WHERE id = ?');
  const doc = JSON.stringify({ participants: 'x'.repeat(2500) });
  // one record inserted, then rewritten five times, as a call's few writes
  const commit = db.transaction((i: number) => {
    if (i % 6 === 0) insert.run(`c${i}`, doc);
    else update.run(doc, `c${i - (i % 6)}`);
  });
  const ms: number[] = [];
  for (let i = 0; i < COMMITS; i++) {
    const t0 = performance.now();
    commit(i);
    ms.push(performance.now() - t0);
  }
  db.close();
  ms.sort((a, b) => a - b);
  const q = (p: number) => ms[Math.floor(p * (ms.length - 1))]!.toFixed(3);
  const total = ms.reduce((a, b) => a + b, 0);
  const label = autoCheckpointPages > 0 ? `every ${autoCheckpointPages} pages` : 'none';
  console.log(
    `checkpoints on the committing connection: ${label.padEnd(16)} ` +
      `median ${q(0.5)} p99 ${q(0.99)} p99.9 ${q(0.999)} max ${q(1)} ms; ` +
      `total ${total.toFixed(0)} ms for ${COMMITS} commits; over 5 ms: ${ms.filter((m) => m > 5).length}`,
  );
}

try {
  run(1000);
  run(0);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
