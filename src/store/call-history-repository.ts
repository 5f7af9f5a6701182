// The calls of one destination number, as the protections read them (spec
// §8): open calls, recent calls, and the same number + agent within a
// minute. A number is found whether it was a record's own number or one of
// its alternates (table call_numbers, kept by trigger; migration 2).
import type { CallRecord } from '../model/call-record.js';
import type { OptOut } from '../model/entities.js';
import type { NumberFacts, NumberFactsQuery } from '../model/number-facts.js';
import type { Db } from './database.js';

export class SqliteCallHistoryRepository {
  private readonly stmts;

  constructor(
    db: Db,
    private readonly calls: { getById(id: string): CallRecord | undefined },
    private readonly optOuts: { get(companyId: string, phoneNumber: string): OptOut | undefined },
  ) {
    this.stmts = {
      open: db.prepare(`SELECT c.id FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
        WHERE n.company_id = ? AND n.phone_number = ? AND c.status IN (SELECT value FROM json_each(?))
        ORDER BY c.created_at, c.id`),
      touchedSince:
        db.prepare(`SELECT c.id FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
        WHERE n.company_id = ? AND n.phone_number = ? AND c.modified_at >= ?
        ORDER BY c.created_at, c.id`),
      sameAgentSince: db.prepare(`SELECT id FROM calls
        WHERE company_id = ? AND phone_number = ? AND agent_id IS ? AND created_at > ?
        ORDER BY created_at DESC, id LIMIT 1`),
    };
  }

  /** Records that may dial `phoneNumber` and are in one of `statuses`. */
  openForNumber(companyId: string, phoneNumber: string, statuses: readonly string[]): CallRecord[] {
    const ids = this.stmts.open.all(companyId, phoneNumber, JSON.stringify(statuses)) as {
      id: string;
    }[];
    return this.load(ids);
  }

  /**
   * Records that may have dialed `phoneNumber` and changed at or after
   * `since` (ISO): every attempt made since then changed its record.
   */
  touchedSince(companyId: string, phoneNumber: string, since: string): CallRecord[] {
    const ids = this.stmts.touchedSince.all(companyId, phoneNumber, since) as { id: string }[];
    return this.load(ids);
  }

  /** The latest record for this number and agent created after `since`. */
  latestWithAgentSince(
    companyId: string,
    phoneNumber: string,
    agentId: string | null,
    since: string,
  ): CallRecord | undefined {
    const row = this.stmts.sameAgentSince.get(companyId, phoneNumber, agentId, since) as
      { id: string } | undefined;
    return row && this.calls.getById(row.id);
  }

  /** The number's opt-out and the three answers above, for one admission. */
  numberFacts(q: NumberFactsQuery): NumberFacts {
    const { companyId, phoneNumber } = q;
    return {
      optOut: this.optOuts.get(companyId, phoneNumber),
      open: this.openForNumber(companyId, phoneNumber, q.openStatuses),
      latestWithAgent: this.latestWithAgentSince(companyId, phoneNumber, q.agentId, q.agentSince),
      touched:
        q.touchedSince === null ? null : this.touchedSince(companyId, phoneNumber, q.touchedSince),
    };
  }

  private load(ids: { id: string }[]): CallRecord[] {
    const out: CallRecord[] = [];
    for (const { id } of ids) {
      const r = this.calls.getById(id);
      if (r) out.push(r);
    }
    return out;
  }
}
