// Numbers that asked never to be called again (or not until a date).
import type { Db } from './database.js';
import type { OptOut } from '../model/entities.js';

interface Row {
  company_id: string;
  phone_number: string;
  permanent: number;
  blocked_until: string | null;
  reason: string | null;
  source: string | null;
  created_at: string;
}

export class SqliteOptOutRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      upsert:
        db.prepare(`INSERT INTO opt_outs (company_id, phone_number, permanent, blocked_until, reason, source, created_at)
        VALUES (@companyId, @phoneNumber, @permanent, @blockedUntil, @reason, @source, @createdAt)
        ON CONFLICT(company_id, phone_number) DO UPDATE SET permanent = excluded.permanent,
          blocked_until = excluded.blocked_until, reason = excluded.reason, source = excluded.source`),
      get: db.prepare('SELECT * FROM opt_outs WHERE company_id = ? AND phone_number = ?'),
      list: db.prepare(
        'SELECT * FROM opt_outs WHERE company_id = ? ORDER BY created_at, phone_number',
      ),
      remove: db.prepare('DELETE FROM opt_outs WHERE company_id = ? AND phone_number = ?'),
    };
  }

  save(optOut: OptOut): OptOut {
    this.stmts.upsert.run({ ...optOut, permanent: optOut.permanent ? 1 : 0 });
    return optOut;
  }

  get(companyId: string, phoneNumber: string): OptOut | undefined {
    const row = this.stmts.get.get(companyId, phoneNumber) as Row | undefined;
    return row && toOptOut(row);
  }

  list(companyId: string): OptOut[] {
    return (this.stmts.list.all(companyId) as Row[]).map(toOptOut);
  }

  remove(companyId: string, phoneNumber: string): boolean {
    return this.stmts.remove.run(companyId, phoneNumber).changes > 0;
  }
}

function toOptOut(row: Row): OptOut {
  return {
    companyId: row.company_id,
    phoneNumber: row.phone_number,
    permanent: row.permanent === 1,
    blockedUntil: row.blocked_until,
    reason: row.reason,
    source: row.source,
    createdAt: row.created_at,
  };
}
