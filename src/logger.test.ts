import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { createLogger } from './logger.js';

it('redacts numbers, transcripts, digits and keys in structured fields', () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const log = createLogger('info', sink);
  log.info(
    {
      callId: 'c1',
      phoneNumber: '+12125551234',
      call: { destinationNumber: '+12125551234', digits: '1234' },
      transcript: 'my card is 4111',
      apiKey: 'ocg_x',
    },
    'call accepted',
  );
  const out = lines.join('');
  expect(out).toContain('"callId":"c1"');
  expect(out).toContain('call accepted');
  for (const secret of ['+12125551234', '1234"', '4111', 'ocg_x'])
    expect(out).not.toContain(secret);
});
