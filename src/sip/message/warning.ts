// RFC 3261 §20.43 Warning: warn-code SP warn-agent SP warn-text,
// comma-separated; warn-code is 3DIGIT, warn-text a quoted-string.

import { splitList } from './headers.js';
import { fail, readQuoted } from './lexer.js';
import type { WarningValue } from './types.js';

/** Parses one Warning header value (one or more entries). */
export function parseWarning(value: string): WarningValue[] {
  const out: WarningValue[] = [];
  for (const part of splitList(value)) {
    const sp1 = part.indexOf(' ');
    if (sp1 !== 3 || !/^\d{3}$/.test(part.slice(0, 3))) fail('bad warn-code');
    const sp2 = part.indexOf(' ', 4);
    if (sp2 < 0) fail('missing warn-text');
    const agent = part.slice(4, sp2);
    if (!agent) fail('empty warn-agent');
    const q = readQuoted(part, sp2 + 1);
    if (sp2 + 1 !== part.indexOf('"', sp2) || q.end !== part.length) fail('bad warn-text');
    out.push({ code: Number(part.slice(0, 3)), agent, text: q.text });
  }
  if (out.length === 0) fail('empty Warning');
  return out;
}
