// The configuration cache's classification and keys (config-cache.ts); its
// behaviour against a real server is in sip-test/store/pg-store-bridge.test.ts.
import { describe, expect, it } from 'vitest';
import { CONFIG_REPOS, ConfigCache, readKey } from './config-cache.js';
import { ConfigGenerations } from './config-generations.js';
import { PgApiKeyRepository } from './pg-api-key-repository.js';
import { PgCompanyRepository } from './pg-company-repository.js';
import { PgDocumentRepository } from './pg-document-repository.js';

/** The repositories' own helpers, never called through the bridge. */
const HELPERS = ['constructor', 'fromRow'];
const methods = (proto: object): string[] =>
  Object.getOwnPropertyNames(proto).filter((m) => !HELPERS.includes(m));

describe('ConfigCache', () => {
  it.each([
    ['companies', PgCompanyRepository.prototype],
    ['apiKeys', PgApiKeyRepository.prototype],
    ['agents', PgDocumentRepository.prototype],
  ] as const)(
    'classifies every method of %s as a cached read, a write or an uncached read',
    (name, proto) => {
      const p = CONFIG_REPOS[name]!;
      const classified = [...Object.keys(p.cached), ...Object.keys(p.writes), ...p.uncached];
      expect(classified.sort()).toEqual(methods(proto).sort());
    },
  );

  it('answers from the cache while the table holds, and only while changes are heard', () => {
    const gens = new ConfigGenerations();
    const cache = new ConfigCache(gens);
    let loads = 0;
    const load = () => ({ n: ++loads });
    expect(cache.read('companies', 'k', load)).toEqual({ n: 1 }); // not listening: no cache
    expect(cache.read('companies', 'k', load)).toEqual({ n: 2 });
    gens.setListening(true);
    expect(cache.read('companies', 'k', load)).toEqual({ n: 3 });
    expect(cache.read('companies', 'k', load)).toEqual({ n: 3 });
    cache.changed(['plans']); // another table
    expect(cache.read('companies', 'k', load)).toEqual({ n: 3 });
    gens.bump('companies'); // as the worker does on a notification
    expect(cache.read('companies', 'k', load)).toEqual({ n: 4 });
    gens.setListening(false);
    expect(cache.read('companies', 'k', load)).toEqual({ n: 5 });
  });

  it('keys a Buffer argument by its bytes', () => {
    expect(readKey('apiKeys', 'findByHash', [Buffer.from([1, 255])])).toBe(
      'apiKeys.findByHash[{"bytes":"01ff"}]',
    );
    expect(readKey('agents', 'get', ['co', 'a1'])).not.toBe(
      readKey('agents', 'get', ['co\u0000a1']),
    );
  });
});
