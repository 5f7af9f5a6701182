// Versioned schema migrations, tracked in PRAGMA user_version. A migration is
// never edited once released: add a new one.
import type { Db } from './database.js';

export const MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
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
  {
    // Scheduler and protections (issue 7; docs/decisions/protections.md).
    version: 2,
    sql: `
      -- Durable schedule: one row per planned dial of a call record (DESIGN
      -- "Reliability rules": lease + idempotency key, dialed at most once).
      -- due_at and lease_until are Unix milliseconds.
      CREATE TABLE schedules (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        company_id TEXT NOT NULL,
        due_at INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('initial', 'retry', 'customer_callback', 'dropped_call')),
        attempt INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'dispatched', 'done', 'cancelled')),
        lease_owner TEXT,
        lease_until INTEGER,
        claims INTEGER NOT NULL DEFAULT 0,
        idempotency_key TEXT NOT NULL UNIQUE,
        outcome TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL
      );
      CREATE INDEX schedules_state_due ON schedules(state, due_at);
      CREATE INDEX schedules_state_lease ON schedules(state, lease_until);
      CREATE INDEX schedules_call ON schedules(call_record_id, state);

      -- Anti-harassment counters read a number's recent calls.
      CREATE INDEX calls_company_number_modified ON calls(company_id, phone_number, modified_at);

      -- Every number a call record may dial (its own and its alternates),
      -- kept by trigger so a number used as an alternate is found by index.
      CREATE TABLE call_numbers (
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        company_id TEXT NOT NULL,
        phone_number TEXT NOT NULL,
        PRIMARY KEY (company_id, phone_number, call_record_id)
      ) WITHOUT ROWID;
      INSERT OR IGNORE INTO call_numbers (call_record_id, company_id, phone_number)
        SELECT id, company_id, phone_number FROM calls;
      INSERT OR IGNORE INTO call_numbers (call_record_id, company_id, phone_number)
        SELECT calls.id, calls.company_id, j.value FROM calls,
          json_each(calls.data, '$.additionalPhoneNumbers') AS j
        WHERE json_type(calls.data, '$.additionalPhoneNumbers') = 'array' AND j.type = 'text';
      CREATE TRIGGER calls_numbers_insert AFTER INSERT ON calls BEGIN
        INSERT OR IGNORE INTO call_numbers (call_record_id, company_id, phone_number)
          VALUES (NEW.id, NEW.company_id, NEW.phone_number);
        INSERT OR IGNORE INTO call_numbers (call_record_id, company_id, phone_number)
          SELECT NEW.id, NEW.company_id, j.value FROM json_each(NEW.data, '$.additionalPhoneNumbers') AS j
          WHERE json_type(NEW.data, '$.additionalPhoneNumbers') = 'array' AND j.type = 'text';
      END;
      CREATE TRIGGER calls_numbers_update AFTER UPDATE OF phone_number ON calls BEGIN
        INSERT OR IGNORE INTO call_numbers (call_record_id, company_id, phone_number)
          VALUES (NEW.id, NEW.company_id, NEW.phone_number);
      END;
    `,
  },
  {
    // Dialogs of answered calls, so a BYE can end them after a crash (issue 23
    // item 6; docs/decisions/no-zombie-calls.md). One row per call record
    // while its dialog is confirmed; deleted when the call ends.
    version: 3,
    sql: `
      CREATE TABLE live_dialogs (
        call_record_id TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
        sip_call_id TEXT NOT NULL,
        local_tag TEXT NOT NULL,
        remote_tag TEXT NOT NULL,
        local_party TEXT NOT NULL,
        remote_party TEXT NOT NULL,
        remote_target TEXT NOT NULL,
        route_set TEXT NOT NULL,
        local_cseq INTEGER NOT NULL,
        transport TEXT NOT NULL CHECK (transport IN ('udp', 'tcp')),
        dest_host TEXT NOT NULL,
        dest_port INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL
      );
    `,
  },
  {
    // Issue 24: a transfer target dialed by the gateway is a second dialog of
    // the same call; both are kept so that a restart after a crash BYEs both.
    version: 4,
    sql: `
      CREATE TABLE live_dialogs_v4 (
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        leg TEXT NOT NULL DEFAULT 'callee' CHECK (leg IN ('callee', 'transfer_target')),
        sip_call_id TEXT NOT NULL,
        local_tag TEXT NOT NULL,
        remote_tag TEXT NOT NULL,
        local_party TEXT NOT NULL,
        remote_party TEXT NOT NULL,
        remote_target TEXT NOT NULL,
        route_set TEXT NOT NULL,
        local_cseq INTEGER NOT NULL,
        transport TEXT NOT NULL CHECK (transport IN ('udp', 'tcp')),
        dest_host TEXT NOT NULL,
        dest_port INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        PRIMARY KEY (call_record_id, leg)
      );
      INSERT INTO live_dialogs_v4 (call_record_id, sip_call_id, local_tag, remote_tag, local_party,
        remote_party, remote_target, route_set, local_cseq, transport, dest_host, dest_port,
        created_at, modified_at)
        SELECT call_record_id, sip_call_id, local_tag, remote_tag, local_party, remote_party,
          remote_target, route_set, local_cseq, transport, dest_host, dest_port, created_at,
          modified_at FROM live_dialogs;
      DROP TABLE live_dialogs;
      ALTER TABLE live_dialogs_v4 RENAME TO live_dialogs;
    `,
  },
  {
    // Issue 25: webhook endpoints and the outbox of their events. An event and
    // its deliveries are written in the transaction of the change they report.
    version: 5,
    sql: `
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        event_types TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        description TEXT,
        secret TEXT NOT NULL,
        previous_secret TEXT,
        previous_secret_expires_at TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL
      );
      CREATE INDEX webhook_endpoints_company ON webhook_endpoints (company_id);
      CREATE TABLE webhook_events (
        id TEXT PRIMARY KEY,
        company_id TEXT NOT NULL,
        record_id TEXT,
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        record_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER,
        last_response_code INTEGER,
        last_error TEXT,
        created_at TEXT NOT NULL,
        delivered_at TEXT
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
      CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, record_id, status, id);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
    `,
  },
  {
    // Issue 26: a dialog may run over TLS; SQLite changes a CHECK by rebuilding.
    version: 6,
    sql: `
      CREATE TABLE live_dialogs_v6 (
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        leg TEXT NOT NULL DEFAULT 'callee' CHECK (leg IN ('callee', 'transfer_target')),
        sip_call_id TEXT NOT NULL,
        local_tag TEXT NOT NULL,
        remote_tag TEXT NOT NULL,
        local_party TEXT NOT NULL,
        remote_party TEXT NOT NULL,
        remote_target TEXT NOT NULL,
        route_set TEXT NOT NULL,
        local_cseq INTEGER NOT NULL,
        transport TEXT NOT NULL CHECK (transport IN ('udp', 'tcp', 'tls')),
        dest_host TEXT NOT NULL,
        dest_port INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        PRIMARY KEY (call_record_id, leg)
      );
      INSERT INTO live_dialogs_v6 SELECT call_record_id, leg, sip_call_id, local_tag, remote_tag,
        local_party, remote_party, remote_target, route_set, local_cseq, transport, dest_host,
        dest_port, created_at, modified_at FROM live_dialogs;
      DROP TABLE live_dialogs;
      ALTER TABLE live_dialogs_v6 RENAME TO live_dialogs;
    `,
  },
  {
    // Issue 27: the daemons sharing a database, and which one owns a call
    // (docs/decisions/multi-node-store.md rules 4-5). One daemon on its
    // SQLite file owns every call; the columns keep the schemas alike.
    version: 7,
    sql: `
      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        sip_address TEXT NOT NULL,
        internal_url TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('up', 'draining')),
        started_at TEXT NOT NULL,
        heartbeat_at INTEGER NOT NULL
      );
      ALTER TABLE calls ADD COLUMN node_id TEXT;
    `,
  },
  {
    // The duplicate-window check (the latest call to a number with an agent,
    // since a moment) by the number's own calls: without it SQLite ranged
    // over the company's calls of the window (calls_company_created), every
    // one of them at 40 calls/s times 60 s, per admission (issue 28 profile).
    version: 8,
    sql: `
      CREATE INDEX calls_company_number_created ON calls(company_id, phone_number, created_at);
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
