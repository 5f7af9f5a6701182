// Plan limits checked again when a number is dialed (DESIGN: at dial time as
// well as request time): seconds left and the plan's channels.
import type { CallRecord } from '../../model/call-record.js';
import { LIVE_STATUSES } from '../../model/call-status.js';
import type { CallStore } from '../ports/call-store.js';
import { channelsInUse } from '../plan-limits.js';

export function dialTimeLimit(
  store: Pick<CallStore, 'companies' | 'calls'>,
  rec: Readonly<CallRecord>,
): string | undefined {
  const plan = store.companies.getPlan(rec.companyId);
  if (!plan) return undefined;
  if (plan.secondsRemaining !== null && plan.secondsRemaining <= 0) {
    return 'no_seconds_available_in_plan';
  }
  if (plan.maxChannels !== null) {
    const live = channelsInUse(store, rec.companyId) - (LIVE_STATUSES.includes(rec.status) ? 1 : 0);
    if (live >= plan.maxChannels) return 'no_channels_available_in_plan';
  }
  return undefined;
}
