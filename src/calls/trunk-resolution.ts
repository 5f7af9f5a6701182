// Which trunk carries a call (spec §4.1 rule 2): the request's sipTrunkId,
// then its voipPhoneId, then the outbound route with the longest prefix
// matching the destination, then the company's default trunk.
import type { SipTrunk } from '../model/entities.js';
import type { CallStore } from './ports/call-store.js';
import { CallError } from './call-error.js';
import type { TrunkRegistrationView } from './trunk-registrations.js';

export interface TrunkChoice {
  trunk: SipTrunk;
  via: 'sipTrunkId' | 'voipPhoneId' | 'outbound_route' | 'default';
  voipPhoneId?: string;
  outboundRouteId?: string;
}

/** What the OPTIONS monitor knows of one trunk, and its registration (the API shows it as `health`). */
export interface TrunkHealthView {
  /** unknown: not pinged (optionsPing off) or not checked yet. */
  status: 'online' | 'offline' | 'unknown';
  checkedAt: string | null;
  lastError: string | null;
  /** Registration trunks only. */
  registration?: TrunkRegistrationView;
}

/** Trunks the OPTIONS monitor has seen stop answering, and why. */
export interface TrunkHealth {
  isOffline(trunkId: string): boolean;
  health(trunkId: string): TrunkHealthView;
}

export function resolveTrunk(
  store: CallStore,
  companyId: string,
  req: { sipTrunkId?: string; voipPhoneId?: string; destinationNumber: string },
  health?: TrunkHealth,
): TrunkChoice {
  const offline = (t: SipTrunk): boolean => health?.isOffline(t.id) ?? false;
  const usable = (t: SipTrunk | undefined): t is SipTrunk => !!t && t.active && !offline(t);
  /** Offline trunks skipped on the way, to say why nothing could carry the call. */
  const skipped: SipTrunk[] = [];
  const consider = (t: SipTrunk | undefined): t is SipTrunk => {
    if (t?.active && offline(t)) skipped.push(t);
    return usable(t);
  };

  if (req.sipTrunkId) {
    const trunk = store.sipTrunks.get(companyId, req.sipTrunkId);
    if (!trunk)
      throw new CallError(
        'sip_trunk_not_found',
        'The SIP trunk in sipTrunkId does not exist in this company.',
      );
    if (!trunk.active)
      throw new CallError('sip_trunk_not_found', 'The SIP trunk in sipTrunkId is inactive.');
    if (offline(trunk)) throw offlineError('The SIP trunk in sipTrunkId', trunk, health);
    return { trunk, via: 'sipTrunkId' };
  }
  if (req.voipPhoneId) {
    const phone = store.voipPhones.get(companyId, req.voipPhoneId);
    if (!phone)
      throw new CallError(
        'voip_phone_not_found',
        'The VoIP phone in voipPhoneId does not exist in this company.',
      );
    const trunk = store.sipTrunks.get(companyId, phone.sipTrunkId);
    if (!trunk?.active)
      throw new CallError(
        'sip_trunk_not_found',
        "The VoIP phone's SIP trunk is missing or inactive.",
      );
    if (offline(trunk)) throw offlineError("The VoIP phone's SIP trunk", trunk, health);
    return { trunk, via: 'voipPhoneId', voipPhoneId: phone.id };
  }
  for (const route of routesFor(store, companyId, req.destinationNumber)) {
    const trunk = store.sipTrunks.get(companyId, route.sipTrunkId);
    if (consider(trunk)) return { trunk, via: 'outbound_route', outboundRouteId: route.id };
  }
  const fallback = store.sipTrunks.list(companyId).find((t) => t.isDefault && consider(t));
  if (fallback) return { trunk: fallback, via: 'default' };
  const first = skipped[0];
  if (first) {
    throw offlineError(
      'No outbound route or default trunk is online to carry the call; the first one tried',
      first,
      health,
    );
  }
  throw new CallError(
    'sip_trunk_not_found',
    'No active SIP trunk or VoIP phone was specified, and no outbound route or default trunk can carry the call.',
  );
}

/** The trunk a transfer target is dialed through, and how it was chosen (spec §2.5 `routedVia`). */
export interface TargetTrunk {
  trunk: SipTrunk;
  /** Set when an outbound route matched the target's number. */
  outboundRouteId?: string;
}

/**
 * Issue 24 item 3: the target of a transfer by bridging goes out through
 * the outbound route with the longest prefix matching its number (an active
 * trunk the OPTIONS monitor does not see offline), else through the call's
 * own trunk.
 */
export function resolveTargetTrunk(
  store: CallStore,
  companyId: string,
  number: string,
  callTrunk: SipTrunk,
  health?: TrunkHealth,
): TargetTrunk {
  for (const route of routesFor(store, companyId, number)) {
    const trunk = store.sipTrunks.get(companyId, route.sipTrunkId);
    if (trunk?.active && !health?.isOffline(trunk.id)) return { trunk, outboundRouteId: route.id };
  }
  return { trunk: callTrunk };
}

/** The company's outbound routes matching a number: longest prefix first, then by priority. */
function routesFor(store: CallStore, companyId: string, number: string) {
  return store.outboundRoutes
    .list(companyId)
    .filter((r) => number.startsWith(r.prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length || a.priority - b.priority);
}

/** Says which trunk is down and what the last OPTIONS ping met; never its address. */
function offlineError(subject: string, trunk: SipTrunk, health?: TrunkHealth): CallError {
  const h = health?.health(trunk.id);
  const reg = h?.registration;
  if (reg?.state === 'unregistered') {
    const why = reg.lastError ? `: ${reg.lastError}` : '';
    return new CallError(
      'sip_trunk_offline',
      `${subject} (${trunk.id}) is offline: it is not registered with its registrar${why}.`,
    );
  }
  const since = h?.checkedAt ? ` (last checked ${h.checkedAt})` : '';
  const why = h?.lastError ? `: ${h.lastError}` : '';
  return new CallError(
    'sip_trunk_offline',
    `${subject} (${trunk.id}) is offline: it stopped answering OPTIONS pings${why}${since}.`,
  );
}

/**
 * Caller ID: the request's (which the trunk must be allowed to present), then
 * a trunk number starting with outBoundCallerIdPrefix, then the trunk default.
 */
export function resolveCallerId(
  trunk: SipTrunk,
  req: { callerId?: string; outBoundCallerIdPrefix?: string },
): string | null {
  const allowed = new Set([
    ...trunk.callerIds,
    ...(trunk.defaultCallerId ? [trunk.defaultCallerId] : []),
  ]);
  if (req.callerId !== undefined) {
    if (!allowed.has(req.callerId)) {
      throw new CallError(
        'caller_id_not_allowed',
        'callerId is not one of the numbers this SIP trunk may present.',
      );
    }
    return req.callerId;
  }
  if (req.outBoundCallerIdPrefix) {
    const prefix = req.outBoundCallerIdPrefix.startsWith('+')
      ? req.outBoundCallerIdPrefix
      : `+${req.outBoundCallerIdPrefix}`;
    const match = [...allowed].find((n) => n.startsWith(prefix));
    if (match) return match;
  }
  return trunk.defaultCallerId ?? trunk.callerIds[0] ?? null;
}
