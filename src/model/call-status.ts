// Call statuses (spec §3.1) and the sets the rules use (DESIGN "Call state").

export const CALL_STATUSES = [
  'failed',
  'cancelled',
  'answered_elsewhere',
  'transferring',
  'transferred',
  'failed_during_call',
  'to_be_processed',
  'trying',
  'ringing',
  'busy',
  'missed',
  'in_call',
  'answered',
  'voice_mail',
  'session_progress',
  'scheduled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** A record never leaves one of these. */
export const FINAL_STATUSES: readonly CallStatus[] = [
  'answered',
  'voice_mail',
  'busy',
  'missed',
  'failed',
  'failed_during_call',
  'cancelled',
  'transferred',
  'answered_elsewhere',
];

/** Holding a SIP channel right now. */
export const LIVE_STATUSES: readonly CallStatus[] = [
  'trying',
  'ringing',
  'session_progress',
  'in_call',
  'transferring',
];

/** No INVITE has been sent for the current dial round yet. */
export const PRE_DIAL_STATUSES: readonly CallStatus[] = ['scheduled', 'to_be_processed'];

/** Accepted and not finished: takes a concurrent-call slot. */
export const ACTIVE_STATUSES: readonly CallStatus[] = ['to_be_processed', ...LIVE_STATUSES];

/** Not final: the states a status change may start from. */
export const OPEN_STATUSES: readonly CallStatus[] = CALL_STATUSES.filter(
  (s) => !FINAL_STATUSES.includes(s),
);

export function isFinal(status: string): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}
