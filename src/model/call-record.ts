// The call record (spec §2.5) as this gateway keeps it: every field typed,
// no index signature. `calls/` writes it (the call session is the only
// writer of a live call), `store/` persists it, `api/` shows it.
import type { CallStatus } from './call-status.js';

export type ParticipantStatus =
  | 'invited'
  | 'ringing'
  | 'joined'
  | 'left'
  | 'no_answer'
  | 'rejected'
  | 'failed'
  | 'cancelled'
  | 'unreachable';

/** spec §2.5 `participants` item (the fields this gateway fills). */
export interface Participant {
  /** `transfer`: the target of a transfer (issue 24). */
  type: 'ai' | 'trunk' | 'transfer';
  role: 'Agent' | 'Contact' | 'User';
  status: ParticipantStatus;
  deviceKind?: 'trunk' | 'sip';
  invitedAt: string;
  joinedAt?: string;
  leftAt?: string;
  phoneNumber?: string;
  /** The SIP Call-ID of the leg. */
  callId?: string;
  agentId?: string;
  agentName?: string;
  codec?: string;
  hertz?: number;
  rtpPort?: number;
  serverIp?: string;
  remoteAddress?: string;
  remotePort?: number;
  initiator?: boolean;
  durationSeconds?: number;
  /** A bridged transfer target: its own media leg's figures. */
  networkQuality?: NetworkQuality;
}

/** spec §2.5 `sipFailure`, plus the raw pieces kept for diagnosis. */
export interface SipFailure {
  code: number;
  reason?: string;
  warning?: string;
  /** No response came because the transport failed: what it said, e.g.
   *  "tls: certificate not trusted (UNABLE_TO_GET_ISSUER_CERT_LOCALLY)". */
  transportError?: string;
  q850?: number;
  kind?:
    | 'number_not_in_service'
    | 'invalid_number'
    | 'rejected'
    | 'barred'
    | 'phone_unreachable'
    | 'network_busy'
    | 'no_credit';
  retryAfter?: number;
}

/** spec §2.5 `networkQuality`. */
export interface NetworkQuality {
  packetsReceived: number;
  packetsLost: number;
  lossPct: number;
  packetsOutOfOrder: number;
  jitterMs: number;
  farEnd?: {
    reports: number;
    lossPct: number;
    worstLossPct: number;
    packetsLost: number;
    jitter: number;
  };
  /** SRTP legs only (RFC 3711): the suite and the packets dropped or decrypted. */
  srtp?: {
    suite: string;
    authFailures: number;
    replayed: number;
    packetsUnprotected: number;
  };
}

/** Final outcome of one dialed attempt (and of the call it ends). */
export type AttemptStatus =
  | 'answered'
  | 'busy'
  | 'missed'
  | 'failed'
  | 'cancelled'
  | 'failed_during_call'
  | 'voice_mail'
  | 'transferred';

/** Why the dial gate did not let a number be dialed (docs/decisions/dial-path.md). */
export type SkipReason =
  | 'callee_opted_out'
  | 'call_already_in_progress'
  | 'daily_call_limit_reached'
  | 'weekly_call_limit_reached'
  | 'failed_call_limit_reached'
  | 'cooldown_period_active'
  | 'outside_calling_hours'
  | 'blocked_day';

/** A number the session dialed (or was about to: no `inviteSentAt` yet). */
export interface DialedAttempt {
  number: string;
  /** 1-based dial round of the call (retries + 1). */
  round: number;
  startedAt: string;
  /** Committed right before the INVITE is handed to the SIP stack. */
  inviteSentAt?: string;
  idempotencyKey?: string;
  sipCallId?: string;
  answeredAt?: string;
  endedAt?: string;
  status?: AttemptStatus;
  endCallReason?: string;
  sipFailure?: SipFailure;
}

/** A number the dial gate refused: not dialed, tried again later or never. */
export interface SkippedAttempt {
  number: string;
  round: number;
  status: 'skipped';
  skipReason: SkipReason;
  at: string;
  /** When the number may be dialed again; absent when never (permanent opt-out). */
  nextAllowedAt?: string;
}

export type Attempt = DialedAttempt | SkippedAttempt;

export function isSkipped(a: Attempt): a is SkippedAttempt {
  return a.status === 'skipped';
}

export type MessageRole = 'Agent' | 'Contact' | 'User' | 'Tool' | 'System';

/** spec §2.5 `messages` item. */
export interface CallMessage {
  role: MessageRole;
  content: string;
  timestamp: string;
  /** Seconds since the answer. */
  seconds: number;
}

export interface AiDialogueEntry {
  role: string;
  content: string;
}

export const SUPER_VARIABLE_TYPES = ['text', 'number', 'boolean', 'date', 'time'] as const;

/** spec §2.1 `superVariables` value. */
export interface SuperVariable {
  placeholder: string;
  value: string;
  type?: (typeof SUPER_VARIABLE_TYPES)[number];
}

/** spec §2.5 `outboundResult`. */
export interface OutboundResult {
  humanJoined?: boolean;
  humanResponded?: boolean;
  askedToNeverCallAgain?: boolean;
  askedToCallBackLater?: boolean;
  dateTimeToCallBack?: string;
}

/** spec §2.5 `transferringDetails.transferMode`. */
export const TRANSFER_MODES = ['blind', 'warm', 'attended'] as const;
export type TransferMode = (typeof TRANSFER_MODES)[number];

/** spec §3.3: `transferringStatus` and a transfer attempt's `status`. */
export type TransferringStatus =
  'transferring' | 'pending_confirmation' | 'success' | 'failed' | 'aborted';

/** spec §3.3 `consultPhase` (warm or attended transfer). */
export type ConsultPhase =
  'idle' | 'consulting_ringing' | 'consulting_dest' | 'back_with_caller' | 'merged' | 'cancelled';

/** Who asked for a transfer. */
export type TransferRequestedBy = 'agent' | 'api';

/**
 * spec §2.5 `transferringDetails`: the transfer in progress, or the last one
 * (the spec's required fields first, then the optional ones that apply to a
 * transfer by REFER, then ours). Written only by the call session.
 */
export interface TransferringDetails {
  /** The call record's id. */
  callSourceId: string;
  /** The SIP Call-ID of the leg that is transferred. */
  callSourceCallId: string;
  transferringStatus: TransferringStatus;
  /** The caller ID of the call (Referred-By unless `showCallerId` is false). */
  callerId: string | null;
  /** A number or SIP URI outside the gateway: always `External` for now. */
  destinationType: 'External';
  /** E.164 number or SIP URI, as asked. */
  destinationNumber: string;
  transferMode: TransferMode;
  /** Why it failed: refer_refused, transfer_failed, no_notify, call_ended, … */
  transferFailedReason?: string;
  transferReason?: string;
  announceTransferReason?: boolean;
  showCallerId?: boolean;
  secondsToWaitForCallerToAnswer?: number;
  messageToPersonWantingToBeTransferred?: string;
  outboundTrunkId?: string;
  /** When the far end first reported progress (REFER accepted, RFC 3515 §2.4.4). */
  referAcceptedAt?: string;
  /** Transfer by bridging: the target's leg (its SIP Call-ID, when its INVITE left). */
  callDestinationCallId?: string;
  inviteSentAt?: string;
  /** Warm or attended: where the consult stands (spec §3.3). */
  consultPhase?: ConsultPhase;
  /** A target dialed by the gateway through an outbound route matching its number. */
  routedVia?: 'outbound_route';
  outboundRouteId?: string;
  // ours
  /** `bridge`: the REFER was refused and the destination dialed as a second leg (fallbackToBridge). */
  via?: 'refer' | 'bridge';
  /** The refused REFER's status, when the transfer fell back to bridging. */
  referRefusedStatus?: number;
  /** The Refer-To URI sent (a transfer by REFER). */
  referTo?: string;
  requestedBy: TransferRequestedBy;
  startedAt: string;
  endedAt?: string;
  /** The last status the far end reported (REFER response or NOTIFY sipfrag). */
  sipStatus?: number;
  sipReason?: string;
}

/** spec §2.5 `transferAttempts` item: one finished transfer. */
export interface TransferAttempt {
  status: 'success' | 'failed' | 'aborted';
  /** When it finished. */
  at: string;
  destinationNumber: string;
  destinationType: 'External';
  transferReason?: string;
  transferFailedReason?: string;
  // ours
  transferMode: TransferMode;
  requestedBy: TransferRequestedBy;
  startedAt: string;
  endedAt: string;
  sipStatus?: number;
  sipReason?: string;
  /** `bridge`: carried out by dialing the destination and bridging (fallbackToBridge, warm, attended). */
  via?: 'refer' | 'bridge';
  /** Warm or attended: the consult's last phase. */
  consultPhase?: ConsultPhase;
}

/** spec §2.5 `scheduledReason`. */
export type ScheduledReason = 'retry' | 'customer_callback' | 'dropped_call';

/** Who ended a call from our side. */
export type EndedBy = 'api' | 'shutdown' | 'watchdog' | 'recovery';

export type CallSource = 'api' | 'scheduled' | 'campaign' | 'workflow';

export interface CallRecord {
  id: string;
  callId: string;
  companyId: string;
  /** The primary destination (E.164). */
  phoneNumber: string;
  agentId: string | null;
  status: CallStatus;
  scheduledAt: string | null;
  createdAt: string;
  modifiedAt: string;

  active: boolean;
  createdBy?: string;
  createdById?: string;
  modifiedBy?: string;
  modifiedById?: string;
  groupIds: string[];
  callerId: string | null;
  sipTrunkId: string | null;
  voipPhoneId?: string | null;
  /** How the trunk was found (internal; the API leaves it out). */
  routing?: { via: string; outboundRouteId?: string | null };
  agentVersionId?: string;
  agentVersionKind?: 'prod' | 'staging' | 'version';
  callDirection: 'outbound' | 'inbound';
  source: CallSource;
  isInternalCall?: boolean;
  humanInCall?: boolean;

  participants: Participant[];
  attempts?: Attempt[];
  messages: CallMessage[];
  aiDialogue?: AiDialogueEntry[];
  recordingEnabled: boolean;
  recordingFileId?: string;

  contextForAi?: string;
  emailAddress?: string;
  dynamicVariables: Record<string, string>;
  superVariables: Record<string, SuperVariable>;
  metadata: Record<string, string>;
  /** Headers the request added to each INVITE of the call (X- and User-to-User). */
  sipHeaders?: Record<string, string>;
  /** The X- headers of the far end's 2xx, names in lower case (RFC 3261 §7.3.1): carrier references and the like. */
  farEndHeaders?: Record<string, string>;
  additionalPhoneNumbers: string[];

  retries: number;
  /** The dial round the call is in (1 = first; each retry or callback starts a new one). */
  dialRound?: number;
  /** A callback round dials only the number that asked for it. */
  callbackNumber?: string;
  maxRetries: number;
  retryDelayMinutes: number;
  useAntiHarassmentProtection: boolean;
  overrideTimeRestriction: boolean;
  overrideDayRestriction: boolean;
  isWelcomeMessageAIGenerated: boolean;
  welcomeMessageOverride?: string;

  /** Zones the protections used for the primary number. */
  destinationTimeZones?: string[];
  destinationCountry?: string | null;
  destinationZoneSource?: 'number' | 'default';
  /** An offset-less `scheduledAt` as sent, and the zone it was read in. */
  scheduledAtLocal?: string;
  scheduledAtZone?: string;
  rescheduled?: boolean;
  rescheduledAt?: string;
  scheduledReason?: ScheduledReason;
  /** Why the gate moved the call (outside_calling_hours, cooldown_period_active, …). */
  scheduleCause?: string;
  lastAttemptStatus?: AttemptStatus;

  endCallReason?: string;
  /** Why, beyond the end reason (agent_unreachable, session_error, …). */
  endDetail?: string;
  endedBy?: EndedBy;
  cancelledReason?: string;
  cancelledDetail?: string;
  sipFailure?: SipFailure;
  startAt?: string;
  endAt?: string;
  duration?: number;

  networkQuality?: NetworkQuality;
  rtpPort?: number;
  rtpIp?: string;
  hertz?: number;

  totalCost: number;
  summary?: string;
  shortSummary?: string;
  postAnalysisResults?: Record<string, unknown>;
  analysedByAi?: 'pending' | 'failed' | 'created' | 'completed';
  funnelStatus?: string;
  resolutionStatus?: string;
  conversionStatus?: string;
  voiceCost?: Record<string, number>;
  transcriptionCost?: number;
  completionCost?: Record<string, number | boolean>;
  /** The agent's cost items (`result.costs`). */
  agentCosts?: Record<string, number>;
  outboundResult?: OutboundResult;
  /** Older agents send a free-text outcome instead of the object. */
  outboundResultLabel?: string;

  /** The transfer in progress, or the last one (issue 24). */
  transferringDetails?: TransferringDetails;
  /** Finished transfers, oldest first. */
  transferAttempts?: TransferAttempt[];
}

/** A change to a record: any fields but its identity. */
export type CallPatch = Partial<Omit<CallRecord, 'id' | 'callId' | 'companyId' | 'createdAt'>>;

/** How a call record is updated (CallRepository.update in calls/ports/call-store.ts). */
export interface CallUpdateOptions {
  /** Update only while the stored status is one of these (a compare-and-set). */
  onlyFrom?: readonly string[];
  /** Logged with a status change. */
  detail?: string;
  /**
   * A session's own write: on a store shared by several daemons, a live
   * record is written only by the node that owns it, so a node taken for
   * lost (its calls adopted by a peer) can no longer write them, nor mark
   * an INVITE as sent (multi-node-store.md rule 4). One daemon owns all.
   */
  ownedOnly?: boolean;
  /**
   * The record as the caller last stored it (a session: the only writer of
   * its live record). A store may then skip reading it back, as long as the
   * row still has this status and modifiedAt; otherwise it reads as usual.
   */
  current?: Readonly<CallRecord>;
}

export interface CallEvent {
  seq: number;
  at: string;
  status: CallStatus;
  detail: string | null;
}

export interface CallQuery {
  statuses?: string[];
  phoneNumber?: string;
  agentId?: string;
  createdFrom?: string;
  createdTo?: string;
  limit: number;
  offset: number;
}

/** The dialed attempts of a record (skipped numbers left out). */
export function dialedAttempts(r: Pick<CallRecord, 'attempts'>): DialedAttempt[] {
  return (r.attempts ?? []).filter((a): a is DialedAttempt => !isSkipped(a));
}
