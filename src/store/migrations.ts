// Versioned schema migrations, tracked in PRAGMA user_version. A migration is
// never edited once released: add a new one.
import type { Db } from './database.js';

const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE companies (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        parent_id TEXT REFERENCES companies(id),
        settings TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
      );
      CREATE INDEX companies_parent ON companies(parent_id);

      CREATE TABLE plans (
        company_id TEXT PRIMARY KEY REFERENCES companies(id) ON DELETE CASCADE,
        allow_outbound INTEGER NOT NULL DEFAULT 1,
        credits REAL,
        seconds_remaining INTEGER,
        max_channels INTEGER,
        max_concurrent_calls INTEGER,
        modified_at TEXT NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        key_hash BLOB NOT NULL UNIQUE,
        masked TEXT NOT NULL,
        full_access INTEGER NOT NULL,
        groups TEXT NOT NULL,
        allowed_ip TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE INDEX api_keys_company ON api_keys(company_id);

      -- Configuration objects owned by a company, kept as JSON documents.
      CREATE TABLE documents (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        data TEXT NOT NULL,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        PRIMARY KEY (kind, id)
      );
      CREATE INDEX documents_company ON documents(kind, company_id);

      CREATE TABLE calls (
        id TEXT PRIMARY KEY,
        call_id TEXT NOT NULL UNIQUE,
        company_id TEXT NOT NULL REFERENCES companies(id),
        phone_number TEXT NOT NULL,
        agent_id TEXT,
        status TEXT NOT NULL,
        scheduled_at TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX calls_company_number ON calls(company_id, phone_number, status);
      CREATE INDEX calls_company_created ON calls(company_id, created_at);
      CREATE INDEX calls_status ON calls(status, scheduled_at);

      CREATE TABLE call_events (
        call_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        status TEXT NOT NULL,
        detail TEXT,
        PRIMARY KEY (call_id, seq)
      );

      CREATE TABLE opt_outs (
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        phone_number TEXT NOT NULL,
        permanent INTEGER NOT NULL,
        blocked_until TEXT,
        reason TEXT,
        source TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (company_id, phone_number)
      );
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `database schema version ${current} is newer than this build (${SCHEMA_VERSION})`,
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}
