// Media engines for tests on loopback: bound to 127.0.0.1, ports from the
// test range, no inactivity timeout; every engine made is closed after each test.
import { afterEach } from 'vitest';
import type { MediaConfig } from '../media-config.js';
import { MediaEngine } from '../media-engine.js';
import { testPortRange } from './port-range.js';

/** Registers the afterEach that closes them; returns the factory and the engines made so far. */
export function useTestEngines(): {
  engine(config?: Partial<MediaConfig>): MediaEngine;
  engines: MediaEngine[];
} {
  const engines: MediaEngine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });
  return {
    engines,
    engine(config = {}) {
      const e = new MediaEngine({
        bindAddress: '127.0.0.1',
        advertisedAddress: '127.0.0.1',
        ...testPortRange(),
        inactivityTimeoutSec: 0,
        ...config,
      });
      engines.push(e);
      return e;
    },
  };
}
