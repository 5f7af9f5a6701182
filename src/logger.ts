// pino with personal data redacted: numbers, transcripts, DTMF digits and
// credentials may appear only under these keys, and never in messages.
import pino, { type Logger } from 'pino';

export const REDACTED_KEYS = [
  'phoneNumber',
  'destinationNumber',
  'callerId',
  'number',
  'from',
  'to',
  'digits',
  'digit',
  'transcript',
  'content',
  'apiKey',
  'password',
  'secret',
  'authorization',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'outbound-call-gateway' },
      redact: {
        paths: [
          ...REDACTED_KEYS,
          ...REDACTED_KEYS.map((k) => `*.${k}`),
          'req.headers["x-api-key"]',
          'req.headers.authorization',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
