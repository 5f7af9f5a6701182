// Adapter from a leg's 401/407 to the digest client in digest-auth.ts.

import type { Authorizer } from './leg-context.js';

/** Placeholder until digest-auth.ts lands: answers no challenge. */
export function createDigestAuthorizer(_credentials: {
  username: string;
  password: string;
}): Authorizer {
  return { authorize: () => undefined };
}
