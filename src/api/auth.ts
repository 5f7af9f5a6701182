// Authentication and tenancy (spec §5): the x-api-key header only, keys
// looked up by hash and compared in constant time, single-IP restriction,
// operation groups, x-company-id for a reseller's own subsidiaries.
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hashApiKey, hashesEqual } from '../accounts/api-key-secret.js';
import type { Clock } from '../clock.js';
import type { ApiKey, Company, OperationGroup } from '../model/entities.js';
import type { Store } from '../store/store.js';
import { ApiError } from './error-catalogue.js';

/** What an authenticated route needs: an operation group, or full access ('admin'). */
export type RouteAccess = OperationGroup | 'admin';

export interface AuthContext {
  key: ApiKey;
  /** The company the request acts for (the key's own, or its subsidiary). */
  company: Company;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

/** One body for every 401, so a caller cannot tell why (spec §5 failure rules). */
const UNAUTHORIZED = () =>
  new ApiError('unauthorized', 'A valid API key is required in the x-api-key header.');

/** last_used_at is written at most this often per key (each write is an fsync). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Makes `scope` (an encapsulated plugin) authenticated: every route in it
 * needs a key, and a route that does not say which operation group it
 * belongs to stops the daemon at start instead of going public. Public
 * routes (health, metrics, docs) are registered outside it.
 */
export function registerAuth(scope: FastifyInstance, store: Store, clock: Clock): void {
  scope.decorateRequest('auth', null as unknown as AuthContext);
  scope.addHook('onRoute', (route) => {
    if (route.config?.access === undefined) {
      throw new Error(
        `${String(route.method)} ${route.url}: an authenticated route must declare config.access (an operation group or 'admin')`,
      );
    }
  });
  scope.addHook('onRequest', async (request) => {
    // Never undefined here (onRoute above); 'admin' is the strictest reading if it were.
    request.auth = authenticate(
      request,
      request.routeOptions.config.access ?? 'admin',
      store,
      clock,
    );
  });
}

function authenticate(
  request: FastifyRequest,
  access: RouteAccess,
  store: Store,
  clock: Clock,
): AuthContext {
  const header = request.headers['x-api-key'];
  if (typeof header !== 'string' || header === '') throw UNAUTHORIZED();
  const hash = hashApiKey(header);
  const key = store.apiKeys.findByHash(hash);
  if (!key || !hashesEqual(key.keyHash, hash)) throw UNAUTHORIZED();
  if (key.allowedIp && normaliseIp(key.allowedIp) !== normaliseIp(request.ip)) throw UNAUTHORIZED();

  const now = clock.now();
  if (!key.lastUsedAt || now - Date.parse(key.lastUsedAt) >= TOUCH_INTERVAL_MS) {
    store.apiKeys.touch(key.id, new Date(now).toISOString());
  }

  if (access === 'admin' ? !key.fullAccess : !key.fullAccess && !key.groups.includes(access)) {
    throw new ApiError(
      'operation_not_allowed',
      `This API key may not perform ${access === 'admin' ? 'administrative' : access} operations.`,
    );
  }

  const own = store.companies.get(key.companyId);
  if (!own) throw UNAUTHORIZED();
  const target = request.headers['x-company-id'];
  if (target === undefined || target === '' || target === own.id) return { key, company: own };
  if (typeof target !== 'string')
    throw new ApiError('company_access_denied', 'x-company-id must be a single value.');
  const sub = store.companies.get(target);
  if (!sub || sub.parentId !== own.id) {
    throw new ApiError(
      'company_access_denied',
      'This API key may not act for the company named in x-company-id.',
    );
  }
  return { key, company: sub };
}

/** One spelling per address: IPv4-mapped IPv6 as IPv4, IPv6 in its canonical form (RFC 5952). */
function normaliseIp(ip: string): string {
  const trimmed = ip.trim().toLowerCase();
  if (trimmed.startsWith('::ffff:') && trimmed.includes('.')) return trimmed.slice(7);
  return isIP(trimmed) === 6 ? new URL(`http://[${trimmed}]`).hostname.slice(1, -1) : trimmed;
}
