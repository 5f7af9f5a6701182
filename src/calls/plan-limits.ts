// The plan's 402s (spec §7), checked when a call is requested and again when
// it is dialed. Channels count calls holding a SIP channel now; concurrent
// slots count every accepted call not yet finished (docs/decisions).
import type { Plan, SipTrunk } from '../model/entities.js';
import type { CallStore } from './ports/call-store.js';
import { CallError } from './call-error.js';
import { ACTIVE_STATUSES, LIVE_STATUSES } from '../model/call-status.js';
import { companyKey, numberKey, trunkKey } from '../model/serialization-keys.js';

/**
 * What an admission or a dial decides about (multi-node-store.md rule 2):
 * each number, and the company's (and trunk's) channel counts when the plan
 * or the trunk limits them. Without such limits, calls to different
 * numbers of one company are decided side by side.
 */
export function decisionKeys(
  plan: Plan | undefined,
  companyId: string,
  numbers: readonly string[],
  trunk: SipTrunk | null,
): string[] {
  const keys = numbers.map((n) => numberKey(companyId, n));
  if (plan && (plan.maxChannels !== null || plan.maxConcurrentCalls !== null))
    keys.push(companyKey(companyId));
  if (trunk?.maxChannels != null) keys.push(trunkKey(trunk.id));
  return keys;
}

/**
 * SIP channels the company holds now: its live calls, and each transfer
 * target the gateway dialed as a second leg (issue 24 item 7).
 */
export function channelsInUse(store: Pick<CallStore, 'calls'>, companyId: string): number {
  return (
    store.calls.countByStatus(companyId, LIVE_STATUSES) + store.calls.countTransferLegs(companyId)
  );
}

/** SIP channels held on a trunk now, by any company's live calls. */
export function trunkChannelsInUse(store: Pick<CallStore, 'calls'>, trunkId: string): number {
  return store.calls.countLiveOnTrunk(trunkId, LIVE_STATUSES);
}

/**
 * Refuses the call when `plan` (read once for the admission, before its
 * keys: the same plan decides what is locked and what is checked) or the
 * trunk leaves no room; the counts are read in the caller's unit of work.
 */
export function checkPlanLimits(
  store: Pick<CallStore, 'calls'>,
  plan: Plan | undefined,
  companyId: string,
  trunk: SipTrunk | null,
): void {
  if (!plan || !plan.allowOutbound) {
    throw new CallError(
      'outbound_calls_not_allowed',
      "The company's plan does not include outbound calls.",
    );
  }
  if (plan.credits !== null && plan.credits <= 0) {
    throw new CallError('insufficient_credits', 'The plan has no credits left.');
  }
  if (plan.secondsRemaining !== null && plan.secondsRemaining <= 0) {
    throw new CallError('no_seconds_available', 'The plan has no call seconds left.');
  }
  if (plan.maxChannels !== null && channelsInUse(store, companyId) >= plan.maxChannels) {
    throw new CallError(
      'no_channels_available',
      `All ${plan.maxChannels} channels of the plan are in use.`,
    );
  }
  if (
    plan.maxConcurrentCalls !== null &&
    store.calls.countByStatus(companyId, ACTIVE_STATUSES) >= plan.maxConcurrentCalls
  ) {
    throw new CallError(
      'no_concurrent_calls_available',
      `All ${plan.maxConcurrentCalls} concurrent call slots of the plan are in use.`,
    );
  }
  if (trunk?.maxChannels != null && trunkChannelsInUse(store, trunk.id) >= trunk.maxChannels) {
    throw new CallError('no_available_channels', 'All channels of the SIP trunk are in use.');
  }
}
