import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sip-test/**/*.test.ts'],
    // Protocol tests start real sipp processes and daemons; give them room
    // on a shared 2-core machine, but never unbounded.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
