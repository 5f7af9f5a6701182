// Who a transfer's second leg is, before it is dialed (issue 24): whether the
// plan has a channel for it, the trunk it goes through (the outbound route
// matching its number, else the call's trunk), the caller ID it shows, and
// the Referred-By a REFER carries for the call. Pure: the session's
// transfers (session-transfers.ts) dial and write.
import type { CallRecord } from '../../model/call-record.js';
import type { SipTrunk } from '../../model/entities.js';
import { callerUriOf } from '../invite-request.js';
import { channelsInUse } from '../plan-limits.js';
import type { CallStore } from '../ports/call-store.js';
import type { TransferRequest } from '../transfer/transfer-request.js';
import { resolveTargetTrunk, type TrunkHealth } from '../trunk-resolution.js';
import type { TargetLegDetails } from './transfer-record.js';

/** How long a dialed target may ring (secondsToWaitForCallerToAnswer's default). */
export const DEFAULT_BRIDGE_WAIT_SECONDS = 30;

export type TargetLegPlan =
  | { ok: true; trunk: SipTrunk; callerId: string | null; leg: TargetLegDetails }
  | { ok: false; reason: 'no_channels_available' };

/** The target's trunk, caller ID and record details, or why it may not be dialed. */
export function planTargetLeg(
  store: CallStore,
  health: TrunkHealth | undefined,
  rec: Readonly<CallRecord>,
  callTrunk: SipTrunk,
  req: TransferRequest,
  callee: string | undefined,
): TargetLegPlan {
  // The target takes a channel of the plan: this call's own second leg is already counted.
  const plan = store.companies.getPlan(rec.companyId);
  if (plan?.maxChannels != null && channelsInUse(store, rec.companyId) > plan.maxChannels) {
    return { ok: false, reason: 'no_channels_available' };
  }
  const { trunk, outboundRouteId } = resolveTargetTrunk(
    store,
    rec.companyId,
    req.destination,
    callTrunk,
    health,
  );
  return {
    ok: true,
    trunk,
    callerId: targetCallerId(trunk, callTrunk, rec.callerId, req.showCallerId, callee),
    leg: {
      outboundTrunkId: trunk.id,
      ...(outboundRouteId ? { routedVia: 'outbound_route' as const, outboundRouteId } : {}),
    },
  };
}

/**
 * The caller ID a transfer target sees: the callee's number when it may be
 * shown and the trunk may present it, else the call's own (through the
 * call's trunk, or a route's trunk that may present it), else the trunk's
 * default.
 */
function targetCallerId(
  trunk: SipTrunk,
  callTrunk: SipTrunk,
  callCallerId: string | null,
  showCallerId: boolean,
  callee: string | undefined,
): string | null {
  if (showCallerId && callee && trunk.callerIds.includes(callee)) return callee;
  if (callCallerId && (trunk.id === callTrunk.id || trunk.callerIds.includes(callCallerId))) {
    return callCallerId;
  }
  return trunk.defaultCallerId;
}

/** A REFER's Referred-By (RFC 3892): the call's caller ID at its trunk, unless it may not be shown. */
export function referredByOf(
  trunk: SipTrunk | undefined,
  callerId: string | null,
  showCallerId: boolean,
): string | undefined {
  return showCallerId && callerId !== null && trunk
    ? `<${callerUriOf(trunk, callerId)}>`
    : undefined;
}
