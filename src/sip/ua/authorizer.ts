// Adapter from a leg's 401/407 to the digest client in digest-auth.ts.

import { DigestClient } from './digest-auth.js';
import type { Authorizer } from './leg-context.js';

/** One DigestClient per leg, so nonce counts follow RFC 2617 §3.2.2. */
export function createDigestAuthorizer(credentials: {
  username: string;
  password: string;
}): Authorizer {
  const client = new DigestClient(credentials);
  return { authorize: (res, method, uri) => client.answer(res, method, uri) };
}
