// uas-200-bye-from-far-end.xml with another hold: the far end answers and
// sends its BYE `holdMs` after our ACK. Written to a temporary file for SIPp.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from '../runner/sipp-runner.js';

/** The scenario's absolute path. */
export function heldCallScenario(holdMs: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'held-call-sipp-'));
  const scenario = join(dir, `uas-200-bye-after-${holdMs}ms.xml`);
  const text = readFileSync(join(SCENARIOS, 'uas-200-bye-from-far-end.xml'), 'utf8');
  const pause = '<pause milliseconds="100"/>';
  if (!text.includes(pause))
    throw new Error('uas-200-bye-from-far-end.xml: its pause is not found');
  writeFileSync(scenario, text.replace(pause, `<pause milliseconds="${holdMs}"/>`));
  return scenario;
}
