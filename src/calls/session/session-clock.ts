// The call session's own progress clock, which the watchdog reads: a
// session is stuck when it has made no progress for longer than its current
// phase allows (ring timeout while dialing, maximum duration in the call)
// plus the stuck margin. Measured from the session's own state changes,
// never from the record's `createdAt` (docs/decisions/dial-path.md).
import type { Clock } from '../../clock.js';

export type SessionPhase = 'starting' | 'dialing' | 'ringing' | 'in_call' | 'finishing';

/** Allowance of the phases without a limit of their own (agent connect, media close, agent grace). */
const SETTLING_MS = 15_000;
/** RFC 3261 §17.1.1.2 Timer B (64 × T1): how long an unanswered INVITE may run. */
const TIMER_B_MS = 32_000;

export class SessionClock {
  private at: number;
  private limitMs = SETTLING_MS;
  phase: SessionPhase = 'starting';

  constructor(
    private readonly clock: Clock,
    private readonly stuckAfterMs: number,
  ) {
    this.at = clock.now();
  }

  /** A state change: the phase's limit runs from now. */
  enter(phase: SessionPhase, limitMs?: number): void {
    this.phase = phase;
    this.at = this.clock.now();
    this.limitMs =
      phase === 'dialing'
        ? (limitMs ?? 0) + TIMER_B_MS
        : phase === 'ringing' || phase === 'in_call'
          ? (limitMs ?? 0)
          : SETTLING_MS;
  }

  /** Unix ms after which the session counts as stuck. */
  get deadline(): number {
    return this.at + this.limitMs + this.stuckAfterMs;
  }
}
