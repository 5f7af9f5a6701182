// RFC 3261 §17 / Appendix A timer values, plus RFC 6026 timers L and M.

export interface TimerConfig {
  /** RTT estimate. Default 500 ms (RFC 3261 §17.1.1.1). */
  T1: number;
  /** Maximum retransmit interval for non-INVITE requests and INVITE responses. Default 4 s. */
  T2: number;
  /** Maximum duration a message remains in the network. Default 5 s. */
  T4: number;
}

export const DEFAULT_TIMER_CONFIG: TimerConfig = { T1: 500, T2: 4000, T4: 5000 };

/** Every timer of RFC 3261 Table 4 and RFC 6026 §8.4/§8.5, for one T1/T2/T4. */
export interface TimerValues extends TimerConfig {
  TIMER_A: number;
  TIMER_B: number;
  TIMER_D: number;
  TIMER_E: number;
  TIMER_F: number;
  TIMER_G: number;
  TIMER_H: number;
  TIMER_I: number;
  TIMER_J: number;
  TIMER_K: number;
  TIMER_L: number;
  TIMER_M: number;
}

export function timerValues(config: TimerConfig = DEFAULT_TIMER_CONFIG): TimerValues {
  const { T1, T2, T4 } = config;
  return {
    T1,
    T2,
    T4,
    TIMER_A: T1, // initially T1, doubles (§17.1.1.2)
    TIMER_B: 64 * T1,
    TIMER_D: Math.max(32_000, 64 * T1), // "> 32s for UDP" (§17.1.1.2)
    TIMER_E: T1, // initially T1, doubles up to T2 (§17.1.2.2)
    TIMER_F: 64 * T1,
    TIMER_G: T1, // initially T1, doubles up to T2 (§17.2.1)
    TIMER_H: 64 * T1,
    TIMER_I: T4,
    TIMER_J: 64 * T1,
    TIMER_K: T4,
    TIMER_L: 64 * T1, // RFC 6026 §8.7
    TIMER_M: 64 * T1, // RFC 6026 §8.4
  };
}
