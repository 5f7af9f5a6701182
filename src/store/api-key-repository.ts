// API keys: only a hash of the secret is stored (the full key is shown once).
import type { Db } from './database.js';
import type { ApiKey, OperationGroup } from '../model/entities.js';

interface Row {
  id: string;
  company_id: string;
  name: string;
  key_hash: Buffer;
  masked: string;
  full_access: number;
  groups: string;
  allowed_ip: string | null;
  created_at: string;
  last_used_at: string | null;
}

export class SqliteApiKeyRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      insert:
        db.prepare(`INSERT INTO api_keys (id, company_id, name, key_hash, masked, full_access, groups, allowed_ip, created_at, last_used_at)
        VALUES (@id, @companyId, @name, @keyHash, @masked, @fullAccess, @groups, @allowedIp, @createdAt, @lastUsedAt)`),
      byHash: db.prepare('SELECT * FROM api_keys WHERE key_hash = ?'),
      get: db.prepare('SELECT * FROM api_keys WHERE id = ? AND company_id = ?'),
      list: db.prepare('SELECT * FROM api_keys WHERE company_id = ? ORDER BY created_at, id'),
      update: db.prepare(
        'UPDATE api_keys SET name = @name, full_access = @fullAccess, groups = @groups, allowed_ip = @allowedIp WHERE id = @id',
      ),
      touch: db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM api_keys WHERE id = ? AND company_id = ?'),
    };
  }

  insert(key: ApiKey): ApiKey {
    this.stmts.insert.run(toParams(key));
    return key;
  }

  findByHash(hash: Buffer): ApiKey | undefined {
    const row = this.stmts.byHash.get(hash) as Row | undefined;
    return row && toKey(row);
  }

  get(companyId: string, id: string): ApiKey | undefined {
    const row = this.stmts.get.get(id, companyId) as Row | undefined;
    return row && toKey(row);
  }

  list(companyId: string): ApiKey[] {
    return (this.stmts.list.all(companyId) as Row[]).map(toKey);
  }

  update(key: ApiKey): void {
    this.stmts.update.run(toParams(key));
  }

  touch(id: string, at: string): void {
    this.stmts.touch.run(at, id);
  }

  /** Revocation is permanent removal (spec §5.6). */
  remove(companyId: string, id: string): boolean {
    return this.stmts.remove.run(id, companyId).changes > 0;
  }
}

function toParams(key: ApiKey): Record<string, unknown> {
  return { ...key, fullAccess: key.fullAccess ? 1 : 0, groups: JSON.stringify(key.groups) };
}

function toKey(row: Row): ApiKey {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    keyHash: row.key_hash,
    masked: row.masked,
    fullAccess: row.full_access === 1,
    groups: JSON.parse(row.groups) as OperationGroup[],
    allowedIp: row.allowed_ip,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
