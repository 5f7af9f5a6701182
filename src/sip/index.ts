// Public surface of the embedded SIP user agent (what the SignalingPort
// adapter in src/calls consumes). Layers: message ← transport ← transaction
// ← dialog ← ua.

export { createSipStack } from './ua/sip-stack.js';
export type { SipStack, SipStackDeps } from './ua/sip-stack.js';
export type { SipStackConfig, ListenAddress } from './ua/config.js';
export { CallLeg } from './ua/call-leg.js';
export type {
  AnsweredEvent,
  CallLegEvents,
  CallLegState,
  DtmfEvent,
  EndedEvent,
  FailedEvent,
  FailureCause,
  HangupReason,
  InfoOptions,
  InviteOptions,
  NotifyEvent,
  PartyAddress,
  ProvisionalEvent,
  ReferEvent,
  ReferOutcome,
  ReferProgress,
  ReferRequest,
  ReinviteEvent,
} from './ua/call-leg-types.js';
export { Registrations } from './ua/registrations.js';
export type {
  RegistrationBinding,
  RegistrationEvents,
  RegistrationSnapshot,
  RegistrationState,
} from './ua/registrations.js';
export { TrunkMonitor } from './ua/trunk-monitor.js';
export type {
  TrunkMonitorEvents,
  TrunkMonitorOptions,
  TrunkStatus,
  TrunkTarget,
} from './ua/trunk-monitor.js';
export type { Clock, TimerHandle } from './transport/clock.js';
export { systemClock } from './transport/clock.js';
export type { SipLogger } from './transport/logger.js';
export type { SipStats } from './transport/stats.js';
export type { DnsResolver } from './transport/resolver.js';
export type { Endpoint, TransportProtocol } from './transport/types.js';
export { SipStackError } from './transport/types.js';
export type { TimerConfig } from './transaction/timers.js';
