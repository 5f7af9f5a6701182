// API key secrets: 256 random bits behind a recognisable prefix, stored only
// as a SHA-256 hash (the key has full entropy, so a slow KDF buys nothing),
// compared in constant time, listed masked.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'ocg_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** "ocg_Ab…wxyz": enough to recognise a key, never enough to use it. */
export function maskApiKey(key: string): string {
  const head = key.startsWith(API_KEY_PREFIX)
    ? key.slice(0, API_KEY_PREFIX.length + 2)
    : key.slice(0, 2);
  return `${head}…${key.length > 12 ? key.slice(-4) : ''}`;
}
