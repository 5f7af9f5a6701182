// Numbers that asked never to be called again (or not until a date), on
// PostgreSQL (issue 27): the SQLite repository's contract, asynchronous.
import type { OptOut } from '../../model/entities.js';
import type { Queryable } from './pg-schedule-repository.js';

export interface OptOutRow {
  company_id: string;
  phone_number: string;
  permanent: boolean;
  blocked_until: string | null;
  reason: string | null;
  source: string | null;
  created_at: string;
}

/** SqliteOptOutRepository in its asynchronous form, on a pool or a transaction's client. */
export class PgOptOutRepository {
  constructor(private readonly db: Queryable) {}

  /** Inserts or replaces the number's opt-out; a replaced one keeps its createdAt. */
  async save(optOut: OptOut): Promise<OptOut> {
    await this.db.query(
      `INSERT INTO opt_outs (company_id, phone_number, permanent, blocked_until, reason, source, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (company_id, phone_number) DO UPDATE SET permanent = excluded.permanent,
         blocked_until = excluded.blocked_until, reason = excluded.reason, source = excluded.source`,
      [
        optOut.companyId,
        optOut.phoneNumber,
        optOut.permanent,
        optOut.blockedUntil,
        optOut.reason,
        optOut.source,
        optOut.createdAt,
      ],
    );
    return optOut;
  }

  async get(companyId: string, phoneNumber: string): Promise<OptOut | undefined> {
    const { rows } = await this.db.query<OptOutRow>(
      'SELECT * FROM opt_outs WHERE company_id = $1 AND phone_number = $2',
      [companyId, phoneNumber],
    );
    return rows[0] && toOptOut(rows[0]);
  }

  async list(companyId: string): Promise<OptOut[]> {
    const { rows } = await this.db.query<OptOutRow>(
      `SELECT * FROM opt_outs WHERE company_id = $1
       ORDER BY created_at COLLATE "C", phone_number COLLATE "C"`,
      [companyId],
    );
    return rows.map(toOptOut);
  }

  async remove(companyId: string, phoneNumber: string): Promise<boolean> {
    const r = await this.db.query(
      'DELETE FROM opt_outs WHERE company_id = $1 AND phone_number = $2',
      [companyId, phoneNumber],
    );
    return (r.rowCount ?? 0) > 0;
  }
}

export function toOptOut(row: OptOutRow): OptOut {
  return {
    companyId: row.company_id,
    phoneNumber: row.phone_number,
    permanent: row.permanent,
    blockedUntil: row.blocked_until,
    reason: row.reason,
    source: row.source,
    createdAt: row.created_at,
  };
}
