// Companies (with reseller → subsidiary links) and their plans on
// PostgreSQL (issue 27): the SQLite repository's contract, asynchronous.
// Text is ordered byte-wise (COLLATE "C"), as SQLite's BINARY collation
// orders it, so both stores list in the same order whatever the locale.
import type { Company, CompanySettings, Plan } from '../../model/entities.js';
import type { Queryable } from './pg-schedule-repository.js';
import { jsonb } from './jsonb.js';

interface CompanyRow {
  id: string;
  name: string;
  parent_id: string | null;
  settings: CompanySettings;
  created_at: string;
}

interface PlanRow {
  company_id: string;
  allow_outbound: boolean;
  credits: number | null;
  /** BIGINT: node-postgres hands int8 over as text. */
  seconds_remaining: string | null;
  max_channels: number | null;
  max_concurrent_calls: number | null;
  modified_at: string;
}

/** SqliteCompanyRepository in its asynchronous form, on a pool or a transaction's client. */
export class PgCompanyRepository {
  constructor(private readonly db: Queryable) {}

  async insert(company: Company): Promise<Company> {
    await this.db.query(
      `INSERT INTO companies (id, name, parent_id, settings, created_at)
       VALUES ($1, $2, $3, $4::jsonb, $5)`,
      [company.id, company.name, company.parentId, jsonb(company.settings), company.createdAt],
    );
    return company;
  }

  async get(id: string): Promise<Company | undefined> {
    const { rows } = await this.db.query<CompanyRow>('SELECT * FROM companies WHERE id = $1', [id]);
    return rows[0] && toCompany(rows[0]);
  }

  async subsidiaries(parentId: string): Promise<Company[]> {
    const { rows } = await this.db.query<CompanyRow>(
      `SELECT * FROM companies WHERE parent_id = $1
       ORDER BY created_at COLLATE "C", id COLLATE "C"`,
      [parentId],
    );
    return rows.map(toCompany);
  }

  async all(): Promise<Company[]> {
    const { rows } = await this.db.query<CompanyRow>(
      'SELECT * FROM companies ORDER BY created_at COLLATE "C", id COLLATE "C"',
    );
    return rows.map(toCompany);
  }

  async count(): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM companies');
    return Number(rows[0]!.n);
  }

  async updateSettings(id: string, settings: CompanySettings): Promise<void> {
    await this.db.query('UPDATE companies SET settings = $1::jsonb WHERE id = $2', [
      jsonb(settings),
      id,
    ]);
  }

  async savePlan(plan: Plan): Promise<Plan> {
    await this.db.query(
      `INSERT INTO plans (company_id, allow_outbound, credits, seconds_remaining, max_channels,
         max_concurrent_calls, modified_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (company_id) DO UPDATE SET allow_outbound = excluded.allow_outbound,
         credits = excluded.credits, seconds_remaining = excluded.seconds_remaining,
         max_channels = excluded.max_channels, max_concurrent_calls = excluded.max_concurrent_calls,
         modified_at = excluded.modified_at`,
      [
        plan.companyId,
        plan.allowOutbound,
        plan.credits,
        plan.secondsRemaining,
        plan.maxChannels,
        plan.maxConcurrentCalls,
        plan.modifiedAt,
      ],
    );
    return plan;
  }

  async getPlan(companyId: string): Promise<Plan | undefined> {
    const { rows } = await this.db.query<PlanRow>('SELECT * FROM plans WHERE company_id = $1', [
      companyId,
    ]);
    const row = rows[0];
    return (
      row && {
        companyId: row.company_id,
        allowOutbound: row.allow_outbound,
        credits: row.credits,
        secondsRemaining: row.seconds_remaining === null ? null : Number(row.seconds_remaining),
        maxChannels: row.max_channels,
        maxConcurrentCalls: row.max_concurrent_calls,
        modifiedAt: row.modified_at,
      }
    );
  }

  /**
   * Charges a finished call's seconds and cost against the plan: seconds
   * stop at 0, credits may go below it, null (unlimited) stays null. One
   * UPDATE, so concurrent charges on several daemons each count.
   */
  async charge(companyId: string, seconds: number, cost: number, at: string): Promise<void> {
    await this.db.query(
      `UPDATE plans SET
         seconds_remaining = CASE WHEN seconds_remaining IS NULL THEN NULL
           ELSE GREATEST(seconds_remaining - $2::bigint, 0) END,
         credits = CASE WHEN credits IS NULL THEN NULL ELSE credits - $3::double precision END,
         modified_at = $4
       WHERE company_id = $1`,
      [companyId, seconds, cost, at],
    );
  }
}

function toCompany(row: CompanyRow): Company {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    settings: row.settings,
    createdAt: row.created_at,
  };
}
