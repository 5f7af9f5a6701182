import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliDatabase } from './cli.js';
import { openDatabase } from './store/database.js';

describe("the CLI's SQLite file", () => {
  it('commits with the WAL synced (a one-shot command has no group fsync behind it); the daemon does not', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-cli-')), 'g.sqlite');
    const cli = cliDatabase(path);
    expect(cli.pragma('synchronous', { simple: true })).toBe(2); // FULL
    const daemon = openDatabase(path);
    expect(daemon.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    cli.close();
    daemon.close();
  });
});
