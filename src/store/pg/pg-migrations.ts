// The PostgreSQL schema (issue 27), versioned like SQLite's: each migration
// runs once, in a transaction, recorded in schema_migrations. Daemons that
// start together migrate one at a time (a session advisory lock). Version 1
// is the SQLite schema at its version 6, version 2 its version 7, table for
// table and column for column (a test holds the two to it); version 3 makes
// text compare byte for byte, as SQLite's does; JSON documents are jsonb, times stay
// ISO text or Unix milliseconds as the repositories write them.
import type pg from 'pg';

export const PG_MIGRATIONS: ReadonlyArray<{ version: number; sql: string }> = [
  {
    version: 1,
    sql: `
      CREATE TABLE companies (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        parent_id TEXT REFERENCES companies(id),
        settings JSONB NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
      );
      CREATE INDEX companies_parent ON companies(parent_id);

      CREATE TABLE plans (
        company_id TEXT PRIMARY KEY REFERENCES companies(id) ON DELETE CASCADE,
        allow_outbound BOOLEAN NOT NULL DEFAULT TRUE,
        credits DOUBLE PRECISION,
        seconds_remaining BIGINT,
        max_channels INTEGER,
        max_concurrent_calls INTEGER,
        modified_at TEXT NOT NULL
      );

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        key_hash BYTEA NOT NULL UNIQUE,
        masked TEXT NOT NULL,
        full_access BOOLEAN NOT NULL,
        groups JSONB NOT NULL,
        allowed_ip TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT
      );
      CREATE INDEX api_keys_company ON api_keys(company_id);

      CREATE TABLE documents (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        data JSONB NOT NULL,
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
        data JSONB NOT NULL
      );
      CREATE INDEX calls_company_number ON calls(company_id, phone_number, status);
      CREATE INDEX calls_company_created ON calls(company_id, created_at);
      CREATE INDEX calls_status ON calls(status, scheduled_at);
      CREATE INDEX calls_company_number_modified ON calls(company_id, phone_number, modified_at);

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
        permanent BOOLEAN NOT NULL,
        blocked_until TEXT,
        reason TEXT,
        source TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (company_id, phone_number)
      );

      -- Durable schedule (DESIGN "Reliability rules": lease + idempotency key).
      -- due_at and lease_until are Unix milliseconds.
      CREATE TABLE schedules (
        id BIGSERIAL PRIMARY KEY,
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        company_id TEXT NOT NULL,
        due_at BIGINT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('initial', 'retry', 'customer_callback', 'dropped_call')),
        attempt INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'claimed', 'dispatched', 'done', 'cancelled')),
        lease_owner TEXT,
        lease_until BIGINT,
        claims INTEGER NOT NULL DEFAULT 0,
        idempotency_key TEXT NOT NULL UNIQUE,
        outcome TEXT,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL
      );
      CREATE INDEX schedules_state_due ON schedules(state, due_at);
      CREATE INDEX schedules_state_lease ON schedules(state, lease_until);
      CREATE INDEX schedules_call ON schedules(call_record_id, state);

      -- Every number a call record may dial (its own and its alternates),
      -- kept by trigger so a number used as an alternate is found by index.
      CREATE TABLE call_numbers (
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        company_id TEXT NOT NULL,
        phone_number TEXT NOT NULL,
        PRIMARY KEY (company_id, phone_number, call_record_id)
      );
      CREATE FUNCTION calls_numbers_keep() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO call_numbers (call_record_id, company_id, phone_number)
          VALUES (NEW.id, NEW.company_id, NEW.phone_number) ON CONFLICT DO NOTHING;
        IF TG_OP = 'INSERT' AND jsonb_typeof(NEW.data -> 'additionalPhoneNumbers') = 'array' THEN
          INSERT INTO call_numbers (call_record_id, company_id, phone_number)
            SELECT NEW.id, NEW.company_id, n
            FROM jsonb_array_elements(NEW.data -> 'additionalPhoneNumbers') AS e(v),
              LATERAL (SELECT e.v #>> '{}' AS n) AS t
            WHERE jsonb_typeof(e.v) = 'string'
          ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER calls_numbers_insert AFTER INSERT ON calls
        FOR EACH ROW EXECUTE FUNCTION calls_numbers_keep();
      CREATE TRIGGER calls_numbers_update AFTER UPDATE OF phone_number ON calls
        FOR EACH ROW EXECUTE FUNCTION calls_numbers_keep();

      -- Dialogs of answered calls, so a BYE can end them after a crash.
      CREATE TABLE live_dialogs (
        call_record_id TEXT NOT NULL REFERENCES calls(id) ON DELETE CASCADE,
        leg TEXT NOT NULL DEFAULT 'callee' CHECK (leg IN ('callee', 'transfer_target')),
        sip_call_id TEXT NOT NULL,
        local_tag TEXT NOT NULL,
        remote_tag TEXT NOT NULL,
        local_party TEXT NOT NULL,
        remote_party TEXT NOT NULL,
        remote_target TEXT NOT NULL,
        route_set JSONB NOT NULL,
        local_cseq BIGINT NOT NULL,
        transport TEXT NOT NULL CHECK (transport IN ('udp', 'tcp', 'tls')),
        dest_host TEXT NOT NULL,
        dest_port INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        modified_at TEXT NOT NULL,
        PRIMARY KEY (call_record_id, leg)
      );

      -- Webhook endpoints and the outbox of their events.
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        company_id TEXT NOT NULL REFERENCES companies(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        event_types JSONB NOT NULL,
        enabled BOOLEAN NOT NULL,
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
        body JSONB NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE webhook_deliveries (
        id BIGSERIAL PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        event_id TEXT NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        record_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT,
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
    // The daemons sharing the database, and which one owns a call
    // (docs/decisions/multi-node-store.md rules 4-5); SQLite's version 7.
    version: 2,
    sql: `
      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        sip_address TEXT NOT NULL,
        internal_url TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('up', 'draining')),
        started_at TEXT NOT NULL,
        heartbeat_at BIGINT NOT NULL
      );
      ALTER TABLE calls ADD COLUMN node_id TEXT;
      CREATE INDEX calls_node_live ON calls (node_id, status);
    `,
  },
  {
    // Every text column compares byte for byte (COLLATE "C"), as SQLite's
    // BINARY does, whatever the database's locale: the repositories order
    // and range-scan with COLLATE "C", and an index only serves a query of
    // its own collation. Foreign keys and the trigger on a column are
    // dropped and made again around it.
    version: 3,
    sql: `
      DROP TRIGGER calls_numbers_update ON calls;
      DO $$
      DECLARE
        fk record;
        col record;
        fks text[] := '{}';
      BEGIN
        FOR fk IN
          SELECT conrelid::regclass AS tbl, conname, pg_get_constraintdef(oid) AS def
          FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace
        LOOP
          fks := fks || format('ALTER TABLE %s ADD CONSTRAINT %I %s', fk.tbl, fk.conname, fk.def);
          EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.tbl, fk.conname);
        END LOOP;
        FOR col IN
          SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = 'public' AND data_type = 'text' AND table_name <> 'schema_migrations'
        LOOP
          EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE text COLLATE "C"',
            col.table_name, col.column_name);
        END LOOP;
        FOR i IN 1 .. coalesce(array_length(fks, 1), 0) LOOP
          EXECUTE fks[i];
        END LOOP;
      END $$;
      CREATE TRIGGER calls_numbers_update AFTER UPDATE OF phone_number ON calls
        FOR EACH ROW EXECUTE FUNCTION calls_numbers_keep();
    `,
  },
  {
    // A change to the configuration a daemon caches (config-cache.ts) is
    // announced to every daemon on the channel gateway_config, the payload
    // naming the table; PostgreSQL delivers it when the change commits.
    version: 4,
    sql: `
      CREATE FUNCTION gateway_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('gateway_config', TG_TABLE_NAME);
        RETURN NULL;
      END $$;
      ${['companies', 'plans', 'api_keys', 'documents', 'webhook_endpoints']
        .map(
          (t) => `CREATE TRIGGER ${t}_config_changed
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${t}
        FOR EACH STATEMENT EXECUTE FUNCTION gateway_config_changed();`,
        )
        .join('\n      ')}
    `,
  },
  {
    // As SQLite's migration 8: the latest call to a number since a moment,
    // found among the number's calls, whatever the planner's statistics say.
    version: 5,
    sql: `
      CREATE INDEX calls_company_number_created ON calls(company_id, phone_number, created_at);
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** Any fixed key: the one session advisory lock every migrating daemon takes. */
const MIGRATION_LOCK = 0x6761_7465_7761_79n; // "gateway"

/**
 * Brings the database up to PG_SCHEMA_VERSION. Daemons starting together
 * queue on one advisory lock, so each migration runs exactly once; a
 * database newer than this build is refused.
 */
export async function migratePg(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ v: number | null }>(
      'SELECT max(version) AS v FROM schema_migrations',
    );
    const current = rows[0]?.v ?? 0;
    if (current > PG_SCHEMA_VERSION)
      throw new Error(
        `database schema version ${current} is newer than this build (${PG_SCHEMA_VERSION})`,
      );
    for (const m of PG_MIGRATIONS) {
      if (m.version <= current) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
    return PG_SCHEMA_VERSION;
  } finally {
    await client
      .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()])
      .catch(() => undefined);
    client.release();
  }
}
