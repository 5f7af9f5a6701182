// Branch, tag and Call-ID generation from a pooled crypto random source.

import { randomFillSync } from 'node:crypto';

/** RFC 3261 §8.1.1.7: every branch we create starts with the magic cookie. */
export const MAGIC_COOKIE = 'z9hG4bK';

// base64url letters: all token characters (RFC 3261 §25.1).
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const POOL_SIZE = 8192;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let used = POOL_SIZE;

/** `n` random characters, 6 bits of entropy each. */
export function randomToken(n: number): string {
  if (n > 512) throw new RangeError('randomToken: at most 512 characters');
  if (used + n > POOL_SIZE) {
    randomFillSync(pool);
    used = 0;
  }
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[pool[used + i]! & 63]!;
  used += n;
  return s;
}

/** A new Via branch: magic cookie + 120 random bits. */
export function generateBranch(): string {
  return MAGIC_COOKIE + randomToken(20);
}

/** A From/To tag (RFC 3261 §19.3: at least 32 random bits; we use 72). */
export function generateTag(): string {
  return randomToken(12);
}

/** A Call-ID (RFC 3261 §8.1.1.4): 144 random bits, `@host` when given. */
export function generateCallId(host?: string): string {
  const id = randomToken(24);
  return host ? id + '@' + host : id;
}
