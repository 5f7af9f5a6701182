// Companies (with reseller → subsidiary links) and their plans.
import type { Db } from './database.js';
import type { Company, CompanySettings, Plan } from '../model/entities.js';

interface CompanyRow {
  id: string;
  name: string;
  parent_id: string | null;
  settings: string;
  created_at: string;
}

interface PlanRow {
  company_id: string;
  allow_outbound: number;
  credits: number | null;
  seconds_remaining: number | null;
  max_channels: number | null;
  max_concurrent_calls: number | null;
  modified_at: string;
}

export class SqliteCompanyRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(
        'INSERT INTO companies (id, name, parent_id, settings, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      get: db.prepare('SELECT * FROM companies WHERE id = ?'),
      children: db.prepare('SELECT * FROM companies WHERE parent_id = ? ORDER BY created_at, id'),
      all: db.prepare('SELECT * FROM companies ORDER BY created_at, id'),
      count: db.prepare('SELECT count(*) AS n FROM companies'),
      updateSettings: db.prepare('UPDATE companies SET settings = ? WHERE id = ?'),
      upsertPlan: db.prepare(`
        INSERT INTO plans (company_id, allow_outbound, credits, seconds_remaining, max_channels, max_concurrent_calls, modified_at)
        VALUES (@companyId, @allowOutbound, @credits, @secondsRemaining, @maxChannels, @maxConcurrentCalls, @modifiedAt)
        ON CONFLICT(company_id) DO UPDATE SET allow_outbound = excluded.allow_outbound, credits = excluded.credits,
          seconds_remaining = excluded.seconds_remaining, max_channels = excluded.max_channels,
          max_concurrent_calls = excluded.max_concurrent_calls, modified_at = excluded.modified_at`),
      getPlan: db.prepare('SELECT * FROM plans WHERE company_id = ?'),
      charge: db.prepare(`UPDATE plans SET
          seconds_remaining = CASE WHEN seconds_remaining IS NULL THEN NULL ELSE max(seconds_remaining - @seconds, 0) END,
          credits = CASE WHEN credits IS NULL THEN NULL ELSE credits - @cost END,
          modified_at = @at
        WHERE company_id = @companyId`),
    };
  }

  insert(company: Company): Company {
    this.stmts.insert.run(
      company.id,
      company.name,
      company.parentId,
      JSON.stringify(company.settings),
      company.createdAt,
    );
    return company;
  }

  get(id: string): Company | undefined {
    const row = this.stmts.get.get(id) as CompanyRow | undefined;
    return row && toCompany(row);
  }

  subsidiaries(parentId: string): Company[] {
    return (this.stmts.children.all(parentId) as CompanyRow[]).map(toCompany);
  }

  all(): Company[] {
    return (this.stmts.all.all() as CompanyRow[]).map(toCompany);
  }

  count(): number {
    return (this.stmts.count.get() as { n: number }).n;
  }

  updateSettings(id: string, settings: CompanySettings): void {
    this.stmts.updateSettings.run(JSON.stringify(settings), id);
  }

  savePlan(plan: Plan): Plan {
    this.stmts.upsertPlan.run({ ...plan, allowOutbound: plan.allowOutbound ? 1 : 0 });
    return plan;
  }

  getPlan(companyId: string): Plan | undefined {
    const row = this.stmts.getPlan.get(companyId) as PlanRow | undefined;
    return (
      row && {
        companyId: row.company_id,
        allowOutbound: row.allow_outbound === 1,
        credits: row.credits,
        secondsRemaining: row.seconds_remaining,
        maxChannels: row.max_channels,
        maxConcurrentCalls: row.max_concurrent_calls,
        modifiedAt: row.modified_at,
      }
    );
  }

  /** Charges a finished call's seconds and cost against the plan. */
  charge(companyId: string, seconds: number, cost: number, at: string): void {
    this.stmts.charge.run({ companyId, seconds, cost, at });
  }
}

function toCompany(row: CompanyRow): Company {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    settings: JSON.parse(row.settings) as CompanySettings,
    createdAt: row.created_at,
  };
}
