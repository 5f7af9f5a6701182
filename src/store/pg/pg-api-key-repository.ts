// API keys on PostgreSQL (issue 27): the SQLite repository's contract,
// asynchronous. Only a hash of the secret is stored (BYTEA); the full key
// is shown once.
import type { ApiKey, OperationGroup } from '../../model/entities.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';

interface Row {
  id: string;
  company_id: string;
  name: string;
  key_hash: Buffer;
  masked: string;
  full_access: boolean;
  groups: OperationGroup[];
  allowed_ip: string | null;
  created_at: string;
  last_used_at: string | null;
}

/** SqliteApiKeyRepository in its asynchronous form, on a pool or a transaction's client. */
export class PgApiKeyRepository {
  constructor(private readonly db: Queryable) {}

  async insert(key: ApiKey): Promise<ApiKey> {
    await this.db.query(
      `INSERT INTO api_keys (id, company_id, name, key_hash, masked, full_access, groups,
         allowed_ip, created_at, last_used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10)`,
      [
        key.id,
        key.companyId,
        key.name,
        key.keyHash,
        key.masked,
        key.fullAccess,
        // node-postgres would send a JS array as a PostgreSQL array, not JSON.
        jsonb(key.groups),
        key.allowedIp,
        key.createdAt,
        key.lastUsedAt,
      ],
    );
    return key;
  }

  async findByHash(hash: Buffer): Promise<ApiKey | undefined> {
    const { rows } = await this.db.query<Row>('SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    return rows[0] && toKey(rows[0]);
  }

  async get(companyId: string, id: string): Promise<ApiKey | undefined> {
    const { rows } = await this.db.query<Row>(
      'SELECT * FROM api_keys WHERE id = $1 AND company_id = $2',
      [id, companyId],
    );
    return rows[0] && toKey(rows[0]);
  }

  async list(companyId: string): Promise<ApiKey[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT * FROM api_keys WHERE company_id = $1
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [companyId],
    );
    return rows.map(toKey);
  }

  /** Name, access, groups and allowed IP, by id alone (as on SQLite). */
  async update(key: ApiKey): Promise<void> {
    await this.db.query(
      `UPDATE api_keys SET name = $2, full_access = $3, groups = $4::jsonb, allowed_ip = $5
       WHERE id = $1`,
      [key.id, key.name, key.fullAccess, jsonb(key.groups), key.allowedIp],
    );
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [at, id]);
  }

  /** Revocation is permanent removal (spec §5.6). */
  async remove(companyId: string, id: string): Promise<boolean> {
    const r = await this.db.query('DELETE FROM api_keys WHERE id = $1 AND company_id = $2', [
      id,
      companyId,
    ]);
    return (r.rowCount ?? 0) > 0;
  }
}

function toKey(row: Row): ApiKey {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    keyHash: row.key_hash,
    masked: row.masked,
    fullAccess: row.full_access,
    groups: row.groups,
    allowedIp: row.allowed_ip,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}
