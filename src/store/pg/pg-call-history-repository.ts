// The calls of one destination number on PostgreSQL (issue 27), as the
// protections read them (spec §8): open calls, recent calls, and the same
// number + agent within a minute. A number is found whether it was a
// record's own number or one of its alternates (table call_numbers, kept by
// trigger). Each answer is one statement returning whole records, where the
// SQLite repository reads ids and then each record.
import type { CallRecord } from '../../model/call-record.js';
import type { NumberFacts, NumberFactsQuery } from '../../model/number-facts.js';
import { toOptOut, type OptOutRow } from './pg-opt-out-repository.js';
import { toCallRecord, type CallRow } from './pg-call-row.js';
import type { Queryable } from './pg-schedule-repository.js';

/** Oldest first, byte order as SQLite's BINARY collation. */
const OLDEST_FIRST = 'ORDER BY c.created_at COLLATE "C", c.id COLLATE "C"';

/** The protections' CallHistory port in its asynchronous form (Async<CallHistory>). */
export class PgCallHistoryRepository {
  constructor(private readonly db: Queryable) {}

  /** Records that may dial `phoneNumber` and are in one of `statuses`. */
  async openForNumber(
    companyId: string,
    phoneNumber: string,
    statuses: readonly string[],
  ): Promise<CallRecord[]> {
    const { rows } = await this.db.query<CallRow>(
      `SELECT c.* FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
       WHERE n.company_id = $1 AND n.phone_number = $2 AND c.status = ANY($3::text[])
       ${OLDEST_FIRST}`,
      [companyId, phoneNumber, statuses],
    );
    return rows.map(toCallRecord);
  }

  /**
   * Records that may have dialed `phoneNumber` and changed at or after
   * `since` (ISO): every attempt made since then changed its record.
   */
  async touchedSince(companyId: string, phoneNumber: string, since: string): Promise<CallRecord[]> {
    const { rows } = await this.db.query<CallRow>(
      `SELECT c.* FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
       WHERE n.company_id = $1 AND n.phone_number = $2 AND c.modified_at COLLATE "C" >= $3
       ${OLDEST_FIRST}`,
      [companyId, phoneNumber, since],
    );
    return rows.map(toCallRecord);
  }

  /**
   * The number's opt-out and the three answers of this repository, for one
   * admission, in one statement: the three answers are a UNION, each row
   * tagged with its part, beside the opt-out as jsonb (one row of NULLs
   * when no record matches). Measured: a unit of work reading it took
   * 1.07-1.18 ms against 1.40-1.63 ms with a statement each.
   */
  async numberFacts(q: NumberFactsQuery): Promise<NumberFacts> {
    const { rows } = await this.db.query<
      (CallRow & { part: 'open' | 'touched' | 'agent' }) | { part: null; opt_out: OptOutRow | null }
    >(
      `SELECT f.*, (SELECT to_jsonb(o) FROM opt_outs o
                    WHERE o.company_id = $1 AND o.phone_number = $2) AS opt_out
       FROM (SELECT 1) one LEFT JOIN (
         SELECT 'open' AS part, c.* FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
         WHERE n.company_id = $1 AND n.phone_number = $2 AND c.status = ANY($3::text[])
         UNION ALL
         SELECT 'touched', c.* FROM call_numbers n JOIN calls c ON c.id = n.call_record_id
         WHERE $5::text IS NOT NULL AND n.company_id = $1 AND n.phone_number = $2
           AND c.modified_at COLLATE "C" >= $5
         UNION ALL
         (SELECT 'agent', * FROM calls
          WHERE company_id = $1 AND phone_number = $2 AND agent_id IS NOT DISTINCT FROM $4
            AND created_at COLLATE "C" > $6
          ORDER BY created_at COLLATE "C" DESC, id COLLATE "C" LIMIT 1)
       ) f ON true
       ORDER BY f.part, f.created_at COLLATE "C", f.id COLLATE "C"`,
      [q.companyId, q.phoneNumber, q.openStatuses, q.agentId, q.touchedSince, q.agentSince],
    );
    const part = (p: string) =>
      rows.filter((r): r is CallRow & { part: 'open' } => r.part === p).map(toCallRecord);
    const optOut = (rows[0] as { opt_out: OptOutRow | null } | undefined)?.opt_out;
    return {
      optOut: optOut ? toOptOut(optOut) : undefined,
      open: part('open'),
      latestWithAgent: part('agent')[0],
      touched: q.touchedSince === null ? null : part('touched'),
    };
  }

  /** The latest record for this number and agent (null matches null) created after `since`. */
  async latestWithAgentSince(
    companyId: string,
    phoneNumber: string,
    agentId: string | null,
    since: string,
  ): Promise<CallRecord | undefined> {
    const { rows } = await this.db.query<CallRow>(
      `SELECT * FROM calls
       WHERE company_id = $1 AND phone_number = $2 AND agent_id IS NOT DISTINCT FROM $3
         AND created_at COLLATE "C" > $4
       ORDER BY created_at COLLATE "C" DESC, id COLLATE "C" LIMIT 1`,
      [companyId, phoneNumber, agentId, since],
    );
    return rows[0] && toCallRecord(rows[0]);
  }
}
