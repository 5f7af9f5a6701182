// What an admission reads about one destination number, in one read (the
// CallHistory port's numberFacts; src/calls/protections/call-history.ts).
import type { CallRecord } from './call-record.js';
import type { OptOut } from './entities.js';

export interface NumberFactsQuery {
  companyId: string;
  phoneNumber: string;
  agentId: string | null;
  /** openForNumber's statuses. */
  openStatuses: readonly string[];
  /** latestWithAgentSince's `since` (ISO). */
  agentSince: string;
  /** touchedSince's `since` (ISO); null when no rule reads it. */
  touchedSince: string | null;
}

export interface NumberFacts {
  optOut: OptOut | undefined;
  open: CallRecord[];
  latestWithAgent: CallRecord | undefined;
  /** Null when the query's touchedSince was. */
  touched: CallRecord[] | null;
}
