// Client-side digest authentication for SIP (RFC 3261 §22, RFC 2617 §3.2.2,
// RFC 8760 / RFC 7616 for SHA-256): answers a 401/407 challenge with an
// Authorization / Proxy-Authorization value.

import { createHash, randomBytes } from 'node:crypto';
import { getHeaders } from '../message/headers.js';
import { parseChallenge } from '../message/challenge.js';
import type { DigestChallenge, SipResponse } from '../message/types.js';

export interface DigestCredentials {
  username: string;
  password: string;
}

export interface AuthorizationInput {
  challenge: DigestChallenge;
  method: string;
  /** The Request-URI of the request being authorised (digest-uri). */
  uri: string;
  credentials: DigestCredentials;
  /** Nonce count for this nonce, starting at 1 (sent as 8 hex digits). */
  nc?: number;
  /** Client nonce; random when absent. */
  cnonce?: string;
  /** Message body, hashed for qop=auth-int. */
  body?: Buffer;
}

/** RFC 8760 §2.1 / RFC 7616 §3.7 algorithms we implement. */
const HASHES: Record<string, string> = {
  md5: 'md5',
  'md5-sess': 'md5',
  'sha-256': 'sha256',
  'sha-256-sess': 'sha256',
};

export function isSupportedChallenge(c: DigestChallenge): boolean {
  return (
    c.scheme.toLowerCase() === 'digest' &&
    c.realm !== undefined &&
    c.nonce !== undefined &&
    HASHES[(c.algorithm ?? 'MD5').toLowerCase()] !== undefined
  );
}

function quoted(v: string): string {
  return '"' + v.replace(/["\\]/g, '\\$&') + '"';
}

/**
 * The credentials value for one challenge (RFC 2617 §3.2.2):
 *   HA1 = H(username:realm:password)        (-sess: H(HA1:nonce:cnonce))
 *   HA2 = H(method:uri)                      (auth-int: H(method:uri:H(body)))
 *   response = H(HA1:nonce:nc:cnonce:qop:HA2) with qop, H(HA1:nonce:HA2) without.
 * qop=auth is preferred when the challenge offers both auth and auth-int.
 */
export function buildAuthorization(input: AuthorizationInput): string {
  const { challenge: c, method, uri, credentials } = input;
  if (!isSupportedChallenge(c)) throw new Error('unsupported digest challenge');
  const algorithm = c.algorithm ?? 'MD5';
  const hashName = HASHES[algorithm.toLowerCase()]!;
  const h = (s: string | Buffer): string => createHash(hashName).update(s).digest('hex');
  const realm = c.realm!;
  const nonce = c.nonce!;
  const offered = c.qop ?? [];
  const qop = offered.includes('auth')
    ? 'auth'
    : offered.includes('auth-int')
      ? 'auth-int'
      : undefined;
  const cnonce = input.cnonce ?? randomBytes(8).toString('hex');
  const nc = (input.nc ?? 1).toString(16).padStart(8, '0');

  let ha1 = h(`${credentials.username}:${realm}:${credentials.password}`);
  if (algorithm.toLowerCase().endsWith('-sess')) ha1 = h(`${ha1}:${nonce}:${cnonce}`);
  const ha2 =
    qop === 'auth-int'
      ? h(`${method}:${uri}:${h(input.body ?? Buffer.alloc(0))}`)
      : h(`${method}:${uri}`);
  const response = qop
    ? h(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`)
    : h(`${ha1}:${nonce}:${ha2}`);

  let v =
    `Digest username=${quoted(credentials.username)}, realm=${quoted(realm)}, ` +
    `nonce=${quoted(nonce)}, uri=${quoted(uri)}, response="${response}", algorithm=${algorithm}`;
  if (qop) v += `, cnonce=${quoted(cnonce)}, qop=${qop}, nc=${nc}`;
  if (c.opaque !== undefined) v += `, opaque=${quoted(c.opaque)}`;
  return v;
}

interface RealmState {
  challenge: DigestChallenge;
  nc: number;
  /** The request we answered this nonce with was challenged again. */
  used: boolean;
}

export interface AuthorizationHeader {
  name: 'authorization' | 'proxy-authorization';
  value: string;
  /** The challenge's stale flag (RFC 2617 §3.2.1): a retry is expected. */
  stale: boolean;
}

/**
 * Remembers realm, nonce and nonce count per realm across requests (RFC 3261
 * §22.3: a UAC may reuse credentials for the same realm). `answer` turns a
 * 401/407 into the header for the retried request, or undefined when it
 * cannot or should not be retried: no challenge we support, or the nonce we
 * already answered is challenged again without stale=true (credentials
 * rejected). A server that rejects with a fresh nonce each time cannot be
 * told from a rotation here, so the caller retries once per request unless
 * `stale` is set.
 */
export class DigestClient {
  private readonly realms = new Map<string, RealmState>();

  constructor(private readonly credentials: DigestCredentials) {}

  answer(
    response: SipResponse,
    method: string,
    uri: string,
    body?: Buffer,
  ): AuthorizationHeader | undefined {
    const proxy = response.status === 407;
    for (const value of getHeaders(response, proxy ? 'proxy-authenticate' : 'www-authenticate')) {
      let c: DigestChallenge;
      try {
        c = parseChallenge(value);
      } catch {
        continue;
      }
      // RFC 8760 §2.4: several challenges come in the server's order of
      // preference; take the first we support.
      if (!isSupportedChallenge(c)) continue;
      const prev = this.realms.get(c.realm!);
      if (prev && prev.used && prev.challenge.nonce === c.nonce && !c.stale) return undefined;
      const state: RealmState = { challenge: c, nc: 0, used: false };
      this.realms.set(c.realm!, state);
      return this.next(state, proxy, method, uri, body);
    }
    return undefined;
  }

  /** Credentials for a new request to a realm we already hold a nonce for
   *  (the nonce count goes up by one). */
  authorizationFor(
    realm: string,
    method: string,
    uri: string,
    proxy = false,
    body?: Buffer,
  ): AuthorizationHeader | undefined {
    const state = this.realms.get(realm);
    return state ? this.next(state, proxy, method, uri, body) : undefined;
  }

  /** Forget a realm's nonce. */
  forget(realm: string): void {
    this.realms.delete(realm);
  }

  private next(
    state: RealmState,
    proxy: boolean,
    method: string,
    uri: string,
    body?: Buffer,
  ): AuthorizationHeader {
    state.nc++;
    state.used = true;
    const value = buildAuthorization({
      challenge: state.challenge,
      method,
      uri,
      credentials: this.credentials,
      nc: state.nc,
      ...(body ? { body } : {}),
    });
    return {
      name: proxy ? 'proxy-authorization' : 'authorization',
      value,
      stale: state.challenge.stale === true,
    };
  }
}
