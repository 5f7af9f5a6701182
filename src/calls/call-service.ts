// Accepting a call request: validate, resolve agent, trunk and caller ID,
// apply the callee protections and the plan, store the record, and hand it
// to the dialer (now) or the scheduler (later).
import type { ConsultAction } from './ports/agent-link.js';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { ApiKey, Company } from '../model/entities.js';
import type { CallQuery, CallRecord } from '../model/call-record.js';
import { FINAL_STATUSES, OPEN_STATUSES } from '../model/call-status.js';
import { CallError } from './call-error.js';
import {
  readInitiateCallRequest,
  type InitiateCallBody,
  type RequestedSchedule,
} from './initiate-call-request.js';
import { resolveScheduledAt } from './intake/scheduled-at.js';
import { checkPlanLimits, decisionKeys } from './plan-limits.js';
import type { CallStore } from './ports/call-store.js';
import { callingRulesFor } from './protections/calling-rules.js';
import {
  countryDefaultZone,
  resolveDestinationZones,
  type DestinationZones,
} from './protections/destination-zones.js';
import { evaluateProtections } from './protections/evaluate-protections.js';
import { scheduleNewCall } from './scheduling/schedule-call.js';
import { resolveCallerId, resolveTrunk, type TrunkHealth } from './trunk-resolution.js';
import { runUrgentWork } from '../urgent-work.js';
import {
  readTransferRequest,
  type TransferBody,
  type TransferResult,
} from './transfer/transfer-request.js';

export interface Requester {
  company: Company;
  key: Pick<ApiKey, 'id' | 'name'>;
}

export interface InitiateCallResult {
  callId: string;
  scheduled: boolean;
  scheduleTime?: string;
  reason?: string;
}

/** Where accepted calls go next: the dialer. */
export interface CallDispatcher {
  /** True while shutting down: no new calls are taken. */
  readonly isDraining?: boolean;
  accepted(record: CallRecord): void;
  /** Ends a live call; resolves with its final record, or undefined when it is not live here. */
  hangup(record: CallRecord): Promise<CallRecord | undefined>;
  /** Transfers a live call (issue 24); undefined when it is not live here. */
  transfer?(record: CallRecord, body: TransferBody): Promise<TransferResult> | undefined;
  /** Merge, cancel or swap of a warm or attended transfer; undefined when the call is not here. */
  consult?(record: CallRecord, action: ConsultAction): Promise<TransferResult> | undefined;
}

export interface CallServiceOptions {
  dispatcher?: CallDispatcher;
  trunkHealth?: TrunkHealth;
  /** Destination time zones (default: from the number's prefix data). */
  zones?: (e164: string) => Promise<DestinationZones>;
  /** Told when a scheduled call is stored, with when it is due (Unix ms). */
  onScheduled?: (dueAt: number) => void;
}

export class CallService {
  private readonly dispatcher: CallDispatcher | undefined;
  private readonly trunkHealth: TrunkHealth | undefined;
  private readonly zones: (e164: string) => Promise<DestinationZones>;

  constructor(
    private readonly store: CallStore,
    private readonly clock: Clock,
    private readonly options: CallServiceOptions = {},
  ) {
    this.dispatcher = options.dispatcher;
    this.trunkHealth = options.trunkHealth;
    this.zones = options.zones ?? resolveDestinationZones;
  }

  /**
   * `onDecided`: told once the admission has run and only its durability is
   * awaited (the in-flight cap stops counting the request there).
   */
  async initiate(
    who: Requester,
    body: InitiateCallBody,
    onDecided?: () => void,
  ): Promise<InitiateCallResult> {
    if (this.dispatcher?.isDraining) {
      throw new CallError(
        'server_unavailable',
        'The gateway is shutting down; retry in a few minutes.',
      );
    }
    const req = readInitiateCallRequest(body);
    const companyId = who.company.id;
    const agent = req.agentId ? this.store.agents.get(companyId, req.agentId) : undefined;
    if (req.agentId && !agent)
      throw new CallError('agent_not_found', 'agentId does not name an agent of this company.');
    const choice = resolveTrunk(this.store, companyId, req, this.trunkHealth);
    const callerId = resolveCallerId(choice.trunk, req);
    const destination = await this.zones(req.destinationNumber);
    runUrgentWork(); // received audio goes on before the protections and the insert

    const now = this.clock.now();
    const nowIso = new Date(now).toISOString();
    const antiHarassment =
      req.useAntiHarassmentProtection ?? who.company.settings.antiHarassmentDefault ?? true;
    const requested = req.scheduledAt
      ? scheduledInstant(req.scheduledAt, destination, who.company.settings)
      : undefined;

    const record: CallRecord = {
      id: randomUUID(),
      callId: randomUUID(),
      companyId,
      phoneNumber: req.destinationNumber,
      agentId: agent?.id ?? null,
      status: 'to_be_processed',
      scheduledAt: null,
      createdAt: nowIso,
      modifiedAt: nowIso,
      active: true,
      createdBy: who.key.name,
      createdById: who.key.id,
      modifiedBy: who.key.name,
      modifiedById: who.key.id,
      groupIds: [],
      callerId,
      sipTrunkId: choice.trunk.id,
      voipPhoneId: choice.voipPhoneId,
      routing: { via: choice.via, outboundRouteId: choice.outboundRouteId },
      agentVersionId: agent ? `${agent.id}@${agent.version}` : undefined,
      agentVersionKind: agent ? 'prod' : undefined,
      callDirection: 'outbound',
      source: 'api',
      isInternalCall: req.isInternalCall,
      humanInCall: false,
      participants: [],
      messages: [],
      recordingEnabled: agent?.outgoing.recordingEnabled ?? true,
      contextForAi: req.contextForAi,
      emailAddress: req.emailAddress,
      dynamicVariables: req.dynamicVariables,
      superVariables: req.superVariables,
      metadata: req.metadata,
      ...(Object.keys(req.sipHeaders).length > 0 ? { sipHeaders: req.sipHeaders } : {}),
      additionalPhoneNumbers: req.additionalPhoneNumbers,
      retries: 0,
      maxRetries: req.maxRetries,
      retryDelayMinutes: req.retryDelayMinutes,
      useAntiHarassmentProtection: antiHarassment,
      overrideTimeRestriction: req.overrideTimeRestriction,
      overrideDayRestriction: req.overrideDayRestriction,
      isWelcomeMessageAIGenerated: req.isWelcomeMessageAIGenerated,
      welcomeMessageOverride: req.welcomeMessageOverride,
      totalCost: 0,
      dialRound: 1,
      ...(requested?.zone && req.scheduledAt?.kind === 'local'
        ? { scheduledAtLocal: req.scheduledAt.local, scheduledAtZone: requested.zone }
        : {}),
    };

    // Protections, plan and insert in one transaction, with no await between
    // them, so two requests cannot both pass a check (spec §4.1 rules 3-7);
    // serialized per number (and plan counts) across daemons (rule 2).
    const plan = this.store.companies.getPlan(companyId);
    const keys = decisionKeys(
      plan,
      companyId,
      [req.destinationNumber, ...(req.additionalPhoneNumbers ?? [])],
      choice.trunk,
    );
    // Answered (and dialed) only once the writes are durable; the daemon does
    // not block on PostgreSQL's commit meanwhile.
    const decision = await this.store.unitOfWork.runDurable(
      () => {
        const d = evaluateProtections(
          {
            companyId,
            settings: who.company.settings,
            phoneNumber: req.destinationNumber,
            agentId: record.agentId,
            scheduledAt: requested?.at ?? null,
            overrideTimeRestriction: req.overrideTimeRestriction,
            overrideDayRestriction: req.overrideDayRestriction,
            antiHarassment,
            destination,
          },
          { history: this.store.callHistory, optOuts: this.store.optOuts, clock: this.clock },
        );
        checkPlanLimits(this.store, plan, companyId, choice.trunk);
        record.destinationTimeZones = d.zones;
        record.destinationCountry = d.country;
        record.destinationZoneSource = d.zoneSource;
        this.store.calls.insert(record);
        if (d.kind === 'schedule') {
          scheduleNewCall(this.store, record, { dueAt: Date.parse(d.at), nowIso });
        }
        return d;
      },
      keys,
      onDecided,
    );

    if (decision.kind === 'schedule') {
      this.options.onScheduled?.(Date.parse(decision.at));
      return {
        callId: record.callId,
        scheduled: true,
        scheduleTime: decision.at,
        reason: decision.reason,
      };
    }
    runUrgentWork(); // and again between the insert and the dial
    this.dispatcher?.accepted(record);
    return { callId: record.callId, scheduled: false };
  }

  get(companyId: string, id: string): CallRecord {
    const record = this.store.calls.get(companyId, id);
    if (!record) throw new CallError('not_found', 'No call with this id in this company.');
    return record;
  }

  query(companyId: string, q: CallQuery): { items: CallRecord[]; total: number } {
    return this.store.calls.query(companyId, q);
  }

  /**
   * Ends a call: a scheduled or not-yet-dialed one is cancelled here; a live
   * one is handed to the dialer (CANCEL before answer, BYE after), and the
   * answer is its final record (the dialer waits a few seconds for it).
   */
  async hangup(companyId: string, id: string, who: Requester['key']): Promise<CallRecord> {
    const record = this.get(companyId, id);
    if ((FINAL_STATUSES as readonly string[]).includes(record.status)) {
      throw new CallError('call_not_live', `The call has already ended (${record.status}).`);
    }
    if (record.status === 'scheduled' || record.status === 'to_be_processed') {
      const at = new Date(this.clock.now()).toISOString();
      const done = this.store.calls.update(
        record.id,
        {
          status: 'cancelled',
          endCallReason: 'user_hungup',
          endAt: at,
          active: false,
          modifiedBy: who.name,
          modifiedById: who.id,
        },
        at,
        { onlyFrom: ['scheduled', 'to_be_processed'], detail: 'hangup_api' },
      );
      if (done) {
        this.store.schedules.cancelForCall(record.id, 'hangup', at);
        return done;
      }
    }
    const ended = await this.dispatcher?.hangup(record);
    if (ended) return ended;
    const latest = this.get(companyId, id);
    if ((OPEN_STATUSES as readonly string[]).includes(latest.status)) {
      throw new CallError('call_not_live', 'The call is not live on this gateway.');
    }
    return latest;
  }

  /**
   * Transfers a connected call (blind by REFER); answers with the outcome
   * once the far end has reported it. 409 call_not_live when the call is
   * not in_call on this gateway, 409 transfer_in_progress, 403
   * callee_opted_out for a destination on the company's opt-out list.
   */
  async transfer(companyId: string, id: string, body: TransferBody): Promise<TransferResult> {
    const record = this.get(companyId, id);
    readTransferRequest(body); // a bad destination is a 400 whatever the call's state
    if (record.status !== 'in_call' && record.status !== 'transferring') {
      throw new CallError('call_not_live', `The call is not connected (${record.status}).`);
    }
    const running = this.dispatcher?.transfer?.(record, body);
    if (!running) throw new CallError('call_not_live', 'The call is not live on this gateway.');
    return running;
  }

  /**
   * Merges, cancels or swaps the warm or attended transfer under way. 409
   * no_consult_in_progress when there is none in a phase that allows it.
   */
  async consult(companyId: string, id: string, action: ConsultAction): Promise<TransferResult> {
    const record = this.get(companyId, id);
    const running = this.dispatcher?.consult?.(record, action);
    if (!running) {
      throw new CallError('no_consult_in_progress', 'No transfer of this call is under way here.');
    }
    return running;
  }
}

/**
 * The requested `scheduledAt` as an instant: an offset-less one is local time
 * in the destination's zone (DESIGN "Ambiguities"), the zone the protections
 * use for that number (its one zone, else the country's deciding zone).
 */
function scheduledInstant(
  requested: RequestedSchedule,
  destination: DestinationZones,
  settings: Company['settings'],
): { at: string; zone?: string } {
  if (requested.kind === 'instant') return { at: requested.at };
  const zone =
    destination.zones.length === 1
      ? destination.zones[0]
      : (callingRulesFor(settings, destination.country).defaultZone ??
        countryDefaultZone(destination.country) ??
        destination.zones[0]);
  if (!zone) {
    throw new CallError(
      'invalid_scheduled_at',
      "scheduledAt has no UTC offset and the destination's time zone is unknown; send an offset.",
    );
  }
  return resolveScheduledAt(requested, zone);
}
