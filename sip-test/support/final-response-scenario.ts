// Renders the final-response UAS scenario for one status line and its extra
// headers (SIPp checks status codes when it loads a scenario, so they cannot
// be -key substitutions).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from '../runner/sipp-runner.js';

const TEMPLATE = readFileSync(join(SCENARIOS, 'uas-final-response.template.xml'), 'utf8');
const DIR = join(tmpdir(), `gw-scenarios-${process.pid}`);

/** The path of a scenario answering `status phrase` with `headers` (e.g. 'Reason: Q.850;cause=17'). */
export function finalResponseScenario(
  status: number,
  phrase: string,
  headers: string[] = [],
): string {
  if (/[\r\n<>&]/.test(phrase + headers.join('')))
    throw new Error('phrase and headers must be plain one-line text');
  mkdirSync(DIR, { recursive: true });
  const lines = headers.length > 0 ? headers.join('\n') : 'X-Test: none';
  const path = join(
    DIR,
    `uas-${status}-${headers.length}-${Buffer.from(phrase + lines)
      .toString('hex')
      .slice(0, 24)}.xml`,
  );
  writeFileSync(
    path,
    TEMPLATE.replace('__STATUS_LINE__', `${status} ${phrase}`).replace('__EXTRA_HEADERS__', lines),
  );
  return path;
}
