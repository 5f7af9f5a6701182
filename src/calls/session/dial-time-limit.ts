// Plan limits checked again when a number is dialed (DESIGN: at dial time as
// well as request time): the seconds left. The plan's channels are counted
// in the dial gate's unit of work, where the call takes its channel
// (round-writes.ts pickNumber).
import type { CallRecord } from '../../model/call-record.js';
import type { CallStore } from '../ports/call-store.js';

export function dialTimeLimit(
  store: Pick<CallStore, 'companies'>,
  rec: Readonly<CallRecord>,
): string | undefined {
  const plan = store.companies.getPlan(rec.companyId);
  if (!plan) return undefined;
  if (plan.secondsRemaining !== null && plan.secondsRemaining <= 0) {
    return 'no_seconds_available_in_plan';
  }
  return undefined;
}
