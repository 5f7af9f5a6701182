// Configuration of the embedded SIP stack; every field says its default.

import type { SessionTimerRequest } from '../dialog/session-timer.js';
import type { TimerConfig } from '../transaction/timers.js';
import { DEFAULT_TIMER_CONFIG } from '../transaction/timers.js';
import type { SipEdgeOptions } from '../transport/source-policy.js';
import { DEFAULT_TCP_LIMITS, type TcpLimits } from '../transport/tcp-transport.js';

export interface ListenAddress {
  /** Default '0.0.0.0'. */
  host: string;
  /** Default 5060; 0 lets the OS choose. */
  port: number;
}

export interface SipStackConfig {
  /** UDP listener; default { host: '0.0.0.0', port: 5060 }; false disables UDP. */
  udp?: ListenAddress | false;
  /** TCP listener; default same as UDP; false disables TCP. */
  tcp?: ListenAddress | false;
  /** TLS (RFC 3261 §26): always able to connect to TLS trunks; it listens
   *  (default 0.0.0.0:5061) only with a certificate of ours. false disables TLS. */
  tls?: Partial<TlsConfig> | false;
  /** Host in Via/Contact; default the listen host, or the first external IPv4. */
  advertisedHost?: string;
  /** RFC 3261 timers; defaults T1 500 ms, T2 4 s, T4 5 s. */
  timers?: Partial<TimerConfig>;
  /** User-Agent / Server header; default 'outbound-call-gateway'. */
  userAgent?: string;
  /** How many times a request is re-sent with credentials after 401/407; default 2. */
  authAttemptLimit?: number;
  /** Close TCP connections idle this long; default 60 000 ms. */
  tcpIdleTimeoutMs?: number;
  /** TCP message deadline (10 s) and caps on accepted connections (1 000
   *  in total, 20 per source address). */
  tcpLimits?: Partial<TcpLimits>;
  /** Answer to an out-of-dialog INVITE (inbound calls are not supported); default 480. */
  inboundInviteStatus?: 403 | 480;
  /** How long a finished leg still answers stray 2xx (ACK/BYE); default 64*T1. */
  lingerMs?: number;
  /** Budgets, strangers, rate limit and UDP buffers (issue 23); see SipEdgeOptions. */
  edge?: SipEdgeOptions;
  /** RFC 4028 on our INVITEs: Session-Expires (0 = not asked for) and Min-SE
   *  (at least 90); default 1800 and 90. */
  sessionTimer?: Partial<SessionTimerRequest>;
  /** A failed registration is tried again after this long, doubling per
   *  failure up to the max; default 30 000 and 600 000 ms. */
  registerRetryMinMs?: number;
  registerRetryMaxMs?: number;
}

/** The TLS transport's settings. */
export interface TlsConfig extends ListenAddress {
  /** Our certificate (chain) and key, PEM: the listener's; none: no listener. */
  server: { cert: string; key: string; ca?: string; requestClientCert?: boolean } | undefined;
  /** RFC 5626 §4.4.1 CRLF keep-alive on our TLS connections; default 30 000
   *  ms, and 10 000 ms for the pong; 0 = none. */
  keepAliveIntervalMs: number;
  keepAliveTimeoutMs: number;
}

export interface ResolvedSipConfig {
  udp: ListenAddress | undefined;
  tcp: ListenAddress | undefined;
  tls: TlsConfig | undefined;
  advertisedHost: string | undefined;
  timers: TimerConfig;
  userAgent: string;
  authAttemptLimit: number;
  tcpIdleTimeoutMs: number;
  tcpLimits: TcpLimits;
  inboundInviteStatus: 403 | 480;
  lingerMs: number | undefined;
  edge: SipEdgeOptions;
  sessionTimer: SessionTimerRequest;
  registerRetryMinMs: number;
  registerRetryMaxMs: number;
}

const DEFAULT_LISTEN: ListenAddress = { host: '0.0.0.0', port: 5060 };

export function resolveSipConfig(config: SipStackConfig): ResolvedSipConfig {
  return {
    udp: config.udp === false ? undefined : (config.udp ?? DEFAULT_LISTEN),
    tcp: config.tcp === false ? undefined : (config.tcp ?? DEFAULT_LISTEN),
    tls:
      config.tls === false
        ? undefined
        : {
            host: config.tls?.host ?? DEFAULT_LISTEN.host,
            port: config.tls?.port ?? 5061,
            server: config.tls?.server,
            keepAliveIntervalMs: config.tls?.keepAliveIntervalMs ?? 30_000,
            keepAliveTimeoutMs: config.tls?.keepAliveTimeoutMs ?? 10_000,
          },
    advertisedHost: config.advertisedHost,
    timers: { ...DEFAULT_TIMER_CONFIG, ...config.timers },
    userAgent: config.userAgent ?? 'outbound-call-gateway',
    authAttemptLimit: config.authAttemptLimit ?? 2,
    tcpIdleTimeoutMs: config.tcpIdleTimeoutMs ?? 60_000,
    tcpLimits: { ...DEFAULT_TCP_LIMITS, ...config.tcpLimits },
    inboundInviteStatus: config.inboundInviteStatus ?? 480,
    lingerMs: config.lingerMs,
    edge: config.edge ?? {},
    sessionTimer: {
      expiresSeconds: config.sessionTimer?.expiresSeconds ?? 1800,
      minSeconds: config.sessionTimer?.minSeconds ?? 90,
    },
    registerRetryMinMs: config.registerRetryMinMs ?? 30_000,
    registerRetryMaxMs: config.registerRetryMaxMs ?? 600_000,
  };
}
