import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CHURN = fileURLToPath(new URL('../test-support/old-space-churn.ts', import.meta.url));

function fullCollections(mb: number): number {
  const run = spawnSync(process.execPath, ['--import', 'tsx', CHURN, String(mb)], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { full: number }).full;
}

describe('startWorkerOldSpaceAt', () => {
  it('spares a worker created afterwards the full collections of a small starting heap', () => {
    // the same churn: V8's default starting heap fills and is collected, 64 MB does not
    expect(fullCollections(0)).toBeGreaterThanOrEqual(1);
    expect(fullCollections(64)).toBe(0);
  });
});
