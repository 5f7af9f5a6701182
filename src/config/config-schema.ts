// The one configuration schema. Every key has its type, default, environment
// variable and a line of description; `config/default.json` mirrors the
// defaults (a test keeps them equal) and the README's table is generated
// from this list (`npm run cli -- config table`).

export type ConfigValueType = 'string' | 'int' | 'number' | 'boolean' | 'list';

export interface ConfigEntry {
  /** Dotted path in the config object, e.g. `http.port`. */
  key: string;
  type: ConfigValueType;
  default: string | number | boolean | string[];
  env: string;
  description: string;
  min?: number;
  max?: number;
  /** Allowed values for a string (or each list item). */
  oneOf?: readonly string[];
  /** Secrets are never printed back (config dump, errors). */
  secret?: boolean;
}

export const CONFIG_SCHEMA: readonly ConfigEntry[] = [
  // HTTP API
  {
    key: 'http.host',
    type: 'string',
    default: '127.0.0.1',
    env: 'GATEWAY_HTTP_HOST',
    description: 'Address the HTTP API listens on (0.0.0.0 for all interfaces).',
  },
  {
    key: 'http.port',
    type: 'int',
    default: 3000,
    env: 'GATEWAY_HTTP_PORT',
    min: 0,
    max: 65535,
    description: 'HTTP API port (0 = any free port).',
  },
  {
    key: 'http.bodyLimitBytes',
    type: 'int',
    default: 262144,
    env: 'GATEWAY_HTTP_BODY_LIMIT_BYTES',
    min: 1024,
    max: 16777216,
    description: 'Largest accepted request body; larger ones get 413.',
  },
  {
    key: 'http.trustProxy',
    type: 'boolean',
    default: false,
    env: 'GATEWAY_HTTP_TRUST_PROXY',
    description: 'Take the client IP from X-Forwarded-For (only behind a trusted proxy).',
  },
  {
    key: 'http.rateLimitMax',
    type: 'int',
    default: 600,
    env: 'GATEWAY_RATE_LIMIT_MAX',
    min: 1,
    description: 'Requests per API key (or client IP when no key) per window before a generic 429.',
  },
  {
    key: 'http.rateLimitWindowMs',
    type: 'int',
    default: 60000,
    env: 'GATEWAY_RATE_LIMIT_WINDOW_MS',
    min: 1000,
    description: 'Length of the rate-limit window in milliseconds.',
  },
  {
    key: 'http.shutdownGraceMs',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_SHUTDOWN_GRACE_MS',
    min: 0,
    description: 'How long SIGTERM waits for live calls to end before exiting.',
  },
  {
    key: 'http.maxEventLoopDelayMs',
    type: 'int',
    default: 200,
    env: 'GATEWAY_HTTP_MAX_EVENT_LOOP_DELAY_MS',
    min: 0,
    description:
      'Mean event-loop delay (sampled every 100 ms) above which API requests get 503 server_unavailable with Retry-After (0 = no limit); /healthz, /readyz and /metrics still answer.',
  },
  {
    key: 'http.maxHeapUsedMb',
    type: 'int',
    default: 1536,
    env: 'GATEWAY_HTTP_MAX_HEAP_USED_MB',
    min: 0,
    description: 'Heap in use above which API requests get 503 (0 = no limit).',
  },
  {
    key: 'http.maxRssMb',
    type: 'int',
    default: 0,
    env: 'GATEWAY_HTTP_MAX_RSS_MB',
    min: 0,
    description:
      'Resident memory (the media worker included) above which API requests get 503 (0 = no limit).',
  },
  {
    key: 'http.maxCallRequestsInFlight',
    type: 'int',
    default: 16,
    env: 'GATEWAY_HTTP_MAX_CALL_REQUESTS_IN_FLIGHT',
    min: 1,
    description:
      'initiate-call requests being handled at once (not those only waiting for their commit to be durable); one more is refused at once with 503 and Retry-After instead of queueing.',
  },
  {
    key: 'http.overloadRetryAfterSeconds',
    type: 'int',
    default: 2,
    env: 'GATEWAY_HTTP_OVERLOAD_RETRY_AFTER_SECONDS',
    min: 1,
    description: 'Retry-After of a 503 refused for load (a draining daemon says 60).',
  },

  // Store
  {
    key: 'store.path',
    type: 'string',
    default: './data/gateway.sqlite',
    env: 'GATEWAY_DB_PATH',
    description: 'SQLite database file (WAL mode); ":memory:" for a throw-away store.',
  },
  {
    key: 'store.url',
    type: 'string',
    default: '',
    env: 'GATEWAY_DATABASE_URL',
    secret: true,
    description:
      'PostgreSQL connection URL (postgres://user:pass@host:port/db): several daemons share it (docs/multi-node.md). Empty: the SQLite file store.path.',
  },
  {
    key: 'store.poolSize',
    type: 'int',
    default: 4,
    env: 'GATEWAY_DATABASE_POOL_SIZE',
    min: 1,
    description:
      'PostgreSQL connections of this daemon: each transaction has its own while it runs or commits (one more listens for configuration changes).',
  },
  {
    key: 'store.timeoutMs',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_DATABASE_TIMEOUT_MS',
    min: 100,
    description:
      'Longest wait for one PostgreSQL answer (also its statement_timeout); past it the request fails with 503.',
  },

  // Cluster (several daemons on one PostgreSQL)
  {
    key: 'cluster.nodeId',
    type: 'string',
    default: '',
    env: 'GATEWAY_NODE_ID',
    description:
      "This daemon's node id, stable across its restarts (it recovers its own calls). Empty: the host name and SIP port.",
  },
  {
    key: 'cluster.internalUrl',
    type: 'string',
    default: '',
    env: 'GATEWAY_INTERNAL_URL',
    description:
      "Where peers reach this daemon's API to hang up or transfer its calls. Empty: http://<http.host>:<HTTP port> (on all interfaces: sip.advertisedHost, else the host name).",
  },
  {
    key: 'cluster.key',
    type: 'string',
    default: '',
    env: 'GATEWAY_CLUSTER_KEY',
    secret: true,
    description:
      'Shared secret that authenticates requests between daemons; required with store.url to forward hangups and transfers.',
  },
  {
    key: 'cluster.heartbeatSeconds',
    type: 'number',
    default: 2,
    env: 'GATEWAY_CLUSTER_HEARTBEAT_SECONDS',
    min: 0.1,
    description: 'How often a daemon on PostgreSQL writes its heartbeat and looks for lost peers.',
  },
  {
    key: 'cluster.lostAfterSeconds',
    type: 'number',
    default: 10,
    env: 'GATEWAY_CLUSTER_LOST_AFTER_SECONDS',
    min: 0.5,
    description:
      'A peer whose heartbeat is older than this is lost: a live daemon finishes its calls and takes its work.',
  },

  // Logging
  {
    key: 'log.level',
    type: 'string',
    default: 'info',
    env: 'GATEWAY_LOG_LEVEL',
    oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    description: 'pino log level.',
  },

  // First start
  {
    key: 'bootstrap.apiKey',
    type: 'string',
    default: '',
    env: 'GATEWAY_BOOTSTRAP_API_KEY',
    secret: true,
    description:
      'When set and no company exists, create company "default" with a full-access key of exactly this value.',
  },

  // SIP
  {
    key: 'sip.engine',
    type: 'string',
    default: 'embedded',
    env: 'GATEWAY_SIP_ENGINE',
    oneOf: ['embedded', 'drachtio'],
    description: 'SIP engine: our embedded stack, or drachtio-srf against a drachtio-server.',
  },
  {
    key: 'sip.host',
    type: 'string',
    default: '127.0.0.1',
    env: 'GATEWAY_SIP_HOST',
    description: 'Address the embedded SIP stack binds (UDP, TCP and the TLS listener).',
  },
  {
    key: 'sip.port',
    type: 'int',
    default: 5060,
    env: 'GATEWAY_SIP_PORT',
    min: 0,
    max: 65535,
    description: 'SIP port of the embedded stack (0 = any free port).',
  },
  {
    key: 'sip.advertisedHost',
    type: 'string',
    default: '',
    env: 'GATEWAY_SIP_ADVERTISED_HOST',
    description:
      'Host put in Via/Contact when it differs from the bind address (NAT); empty = bind address.',
  },
  {
    key: 'sip.transports',
    type: 'list',
    default: ['udp', 'tcp'],
    env: 'GATEWAY_SIP_TRANSPORTS',
    oneOf: ['udp', 'tcp'],
    description: 'Transports the embedded stack listens on.',
  },
  {
    key: 'sip.t1Ms',
    type: 'int',
    default: 500,
    env: 'GATEWAY_SIP_T1_MS',
    min: 10,
    description: 'RFC 3261 T1 (RTT estimate), base of the retransmission timers.',
  },
  {
    key: 'sip.t2Ms',
    type: 'int',
    default: 4000,
    env: 'GATEWAY_SIP_T2_MS',
    min: 10,
    description:
      'RFC 3261 T2 (maximum retransmit interval for non-INVITE requests and INVITE responses).',
  },
  {
    key: 'sip.t4Ms',
    type: 'int',
    default: 5000,
    env: 'GATEWAY_SIP_T4_MS',
    min: 10,
    description: 'RFC 3261 T4 (maximum time a message stays in the network).',
  },
  {
    key: 'sip.userAgent',
    type: 'string',
    default: 'outbound-call-gateway',
    env: 'GATEWAY_SIP_USER_AGENT',
    description: 'User-Agent header value.',
  },
  {
    key: 'sip.authAttempts',
    type: 'int',
    default: 2,
    env: 'GATEWAY_SIP_AUTH_ATTEMPTS',
    min: 1,
    max: 5,
    description: 'Digest challenges answered per INVITE before the leg fails with the 401/407.',
  },
  {
    key: 'sip.sessionExpiresSeconds',
    type: 'int',
    default: 1800,
    env: 'GATEWAY_SIP_SESSION_EXPIRES_SECONDS',
    min: 0,
    max: 86400,
    description:
      'Session-Expires our INVITEs ask for (RFC 4028 session timers; 0 = not asked for): the call is refreshed within it, and ended with BYE (no_voip_connection) when a refresh fails or an expected one never comes. Raised to sip.sessionMinExpiresSeconds when below it.',
  },
  {
    key: 'sip.sessionMinExpiresSeconds',
    type: 'int',
    default: 90,
    env: 'GATEWAY_SIP_SESSION_MIN_EXPIRES_SECONDS',
    min: 90,
    max: 86400,
    description:
      'Min-SE our INVITEs carry (RFC 4028: at least 90); a 422 from the far end raises it for that call.',
  },
  {
    key: 'sip.optionsPingSeconds',
    type: 'int',
    default: 30,
    env: 'GATEWAY_SIP_OPTIONS_PING_SECONDS',
    min: 0,
    description:
      'Interval of OPTIONS pings to the trunks that ask for them (optionsPing; 0 = none); a trunk that stops answering is marked offline.',
  },
  {
    key: 'sip.optionsPingFailures',
    type: 'int',
    default: 1,
    env: 'GATEWAY_SIP_OPTIONS_PING_FAILURES',
    min: 1,
    max: 10,
    description:
      'Unanswered OPTIONS pings in a row (each waits Timer F, 64 × T1) before a trunk is offline; a DNS or transport failure is at once.',
  },
  {
    key: 'sip.tlsPort',
    type: 'int',
    default: 5061,
    env: 'GATEWAY_SIP_TLS_PORT',
    min: 0,
    max: 65535,
    description:
      'SIP over TLS listener port (0 = any free port); it listens only with sip.tlsCertFile and sip.tlsKeyFile. TLS trunks are dialed either way.',
  },
  {
    key: 'sip.tlsCertFile',
    type: 'string',
    default: '',
    env: 'GATEWAY_SIP_TLS_CERT_FILE',
    description:
      "PEM file with the gateway's TLS certificate (chain) for inbound TLS (in-dialog requests from TLS trunks); empty = no TLS listener.",
  },
  {
    key: 'sip.tlsKeyFile',
    type: 'string',
    default: '',
    env: 'GATEWAY_SIP_TLS_KEY_FILE',
    description: 'PEM file with the private key of sip.tlsCertFile.',
  },
  {
    key: 'sip.tlsKeepAliveSeconds',
    type: 'int',
    default: 30,
    env: 'GATEWAY_SIP_TLS_KEEPALIVE_SECONDS',
    min: 0,
    description:
      'RFC 5626 CRLF keep-alive on TLS connections the gateway opened: a ping after this long without traffic, the connection dropped when no pong comes within 10 s (0 = none).',
  },
  {
    key: 'sip.registerRetryMinSeconds',
    type: 'int',
    default: 30,
    env: 'GATEWAY_SIP_REGISTER_RETRY_MIN_SECONDS',
    min: 1,
    description:
      "A registration trunk whose REGISTER failed tries again after this long, doubling per failure up to sip.registerRetryMaxSeconds (a registrar's Retry-After wins).",
  },
  {
    key: 'sip.registerRetryMaxSeconds',
    type: 'int',
    default: 600,
    env: 'GATEWAY_SIP_REGISTER_RETRY_MAX_SECONDS',
    min: 1,
    description: 'Longest wait between failed registration attempts.',
  },
  {
    key: 'sip.tcpIdleTimeoutMs',
    type: 'int',
    default: 60000,
    env: 'GATEWAY_SIP_TCP_IDLE_TIMEOUT_MS',
    min: 1000,
    description:
      'A SIP TCP connection without a complete message, keep-alive ping (double CRLF) or send for this long is closed.',
  },
  {
    key: 'sip.tcpMessageDeadlineMs',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_SIP_TCP_MESSAGE_DEADLINE_MS',
    min: 100,
    description:
      'A SIP message on TCP must be complete this long after its first byte, however slowly it arrives, or the connection is destroyed.',
  },
  {
    key: 'sip.tcpMaxConnections',
    type: 'int',
    default: 1000,
    env: 'GATEWAY_SIP_TCP_MAX_CONNECTIONS',
    min: 1,
    description:
      'Accepted SIP TCP connections open at once; over it a new one is closed at once (our own outbound connections are not counted).',
  },
  {
    key: 'sip.tcpMaxConnectionsPerSource',
    type: 'int',
    default: 20,
    env: 'GATEWAY_SIP_TCP_MAX_CONNECTIONS_PER_SOURCE',
    min: 1,
    description: 'Accepted SIP TCP connections open at once from one source IP address.',
  },
  {
    key: 'sip.maxServerTransactions',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_SIP_MAX_SERVER_TRANSACTIONS',
    min: 10,
    max: 1000000,
    description:
      'Live SIP server transactions (about 4 KB of heap each); at the budget a new out-of-dialog request gets a stateless 503 with Retry-After (a trunk or allowed source) or nothing (anyone else). Requests inside a live dialog keep a reserve of a tenth above it.',
  },
  {
    key: 'sip.maxClientTransactions',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_SIP_MAX_CLIENT_TRANSACTIONS',
    min: 10,
    max: 1000000,
    description:
      'Live SIP client transactions; at the budget a new INVITE or OPTIONS ping of ours fails at once with a local 503 (BYE, CANCEL and other requests of live calls still go).',
  },
  {
    key: 'sip.strangers',
    type: 'string',
    default: 'reject',
    env: 'GATEWAY_SIP_STRANGERS',
    oneOf: ['reject', 'drop', 'serve'],
    description:
      'Out-of-dialog requests from addresses that are neither a trunk nor in sip.allowedSources: reject = one stateless 403 (no transaction, no retransmission), drop = no answer, serve = as from a trunk. OPTIONS is answered statelessly from anyone.',
  },
  {
    key: 'sip.allowedSources',
    type: 'list',
    default: [],
    env: 'GATEWAY_SIP_ALLOWED_SOURCES',
    description:
      "IP addresses or CIDR blocks (e.g. 192.0.2.0/24) trusted like a trunk's resolved addresses, which are trusted without being listed.",
  },
  {
    key: 'sip.strangerRateLimit',
    type: 'int',
    default: 20,
    env: 'GATEWAY_SIP_STRANGER_RATE_LIMIT',
    min: 0,
    description:
      'Out-of-dialog requests per second one IP that is not a trunk or allowed source may send (a token bucket of as many); past it the IP is silenced for sip.strangerBlockSeconds (0 = no limit).',
  },
  {
    key: 'sip.strangerBlockSeconds',
    type: 'int',
    default: 60,
    env: 'GATEWAY_SIP_STRANGER_BLOCK_SECONDS',
    min: 1,
    description: 'How long an IP over sip.strangerRateLimit gets no answer at all.',
  },
  {
    key: 'sip.udpRecvBufferBytes',
    type: 'int',
    default: 4194304,
    env: 'GATEWAY_SIP_UDP_RECV_BUFFER_BYTES',
    min: 0,
    description:
      "SO_RCVBUF asked for on the SIP UDP socket, so a trunk's datagrams survive a burst (0 = the OS default); Linux caps it at net.core.rmem_max and a warning says so.",
  },
  {
    key: 'sip.udpSendBufferBytes',
    type: 'int',
    default: 1048576,
    env: 'GATEWAY_SIP_UDP_SEND_BUFFER_BYTES',
    min: 0,
    description:
      'SO_SNDBUF asked for on the SIP UDP socket (0 = the OS default); capped at net.core.wmem_max.',
  },
  {
    key: 'drachtio.host',
    type: 'string',
    default: '127.0.0.1',
    env: 'DRACHTIO_HOST',
    description: 'drachtio-server host (engine "drachtio").',
  },
  {
    key: 'drachtio.port',
    type: 'int',
    default: 9022,
    env: 'DRACHTIO_PORT',
    min: 1,
    max: 65535,
    description: 'drachtio-server admin port.',
  },
  {
    key: 'drachtio.secret',
    type: 'string',
    default: 'cymru',
    env: 'DRACHTIO_SECRET',
    secret: true,
    description: 'drachtio-server shared secret.',
  },

  // Media
  {
    key: 'rtp.host',
    type: 'string',
    default: '127.0.0.1',
    env: 'GATEWAY_RTP_HOST',
    description: 'Address RTP sockets bind.',
  },
  {
    key: 'rtp.advertisedIp',
    type: 'string',
    default: '',
    env: 'GATEWAY_RTP_ADVERTISED_IP',
    description:
      'IP written into SDP c= when it differs from the bind address; empty = bind address.',
  },
  {
    key: 'rtp.portMin',
    type: 'int',
    default: 20000,
    env: 'GATEWAY_RTP_PORT_MIN',
    min: 1024,
    max: 65534,
    description: 'Lowest RTP port (even); RTCP uses RTP + 1.',
  },
  {
    key: 'rtp.portMax',
    type: 'int',
    default: 29999,
    env: 'GATEWAY_RTP_PORT_MAX',
    min: 1025,
    max: 65535,
    description: 'Highest RTP/RTCP port.',
  },
  {
    key: 'rtp.codecs',
    type: 'list',
    default: ['PCMU', 'PCMA'],
    env: 'GATEWAY_RTP_CODECS',
    oneOf: ['PCMU', 'PCMA'],
    description: 'Codecs offered, in order of preference (telephone-event is always added).',
  },
  {
    key: 'rtp.symmetric',
    type: 'boolean',
    default: true,
    env: 'GATEWAY_RTP_SYMMETRIC',
    description: 'Latch RTP to the address the far end actually sends from.',
  },
  {
    key: 'rtp.inactivitySeconds',
    type: 'int',
    default: 30,
    env: 'GATEWAY_RTP_INACTIVITY_SECONDS',
    min: 0,
    description:
      'End an answered call with no_rtp_stream after this many seconds without RTP (0 = never). After as long without RTP while none is expected (the far end holds the call), the far end is asked in its dialog (OPTIONS) and the call ends with no_voip_connection if it does not answer.',
  },
  {
    key: 'rtp.worker',
    type: 'boolean',
    default: true,
    env: 'GATEWAY_RTP_WORKER',
    description:
      'Run RTP (sockets, pacing, sessions) on a worker thread, so packets leave on time whatever the main thread is doing.',
  },
  {
    key: 'rtp.workerNice',
    type: 'int',
    default: -10,
    env: 'GATEWAY_RTP_WORKER_NICE',
    min: -20,
    max: 19,
    description:
      'Nice value of the media worker thread (Linux): negative runs it ahead of call set-up and other processes when the cores are busy. Needs CAP_SYS_NICE; without it the worker keeps normal priority and a warning is logged.',
  },
  {
    key: 'rtp.workerRealtimePriority',
    type: 'int',
    default: 10,
    env: 'GATEWAY_RTP_WORKER_REALTIME_PRIORITY',
    min: 0,
    max: 99,
    description:
      'SCHED_RR priority of the media worker thread (Linux, set with chrt): it then runs the moment a packet is due, ahead of call set-up and other processes however busy the cores (at nice -10 alone it waited up to 4 ms for a core under call churn). Needs CAP_SYS_NICE or RLIMIT_RTPRIO; without it a warning is logged and the nice value applies. 0 = off.',
  },
  {
    key: 'rtp.workerOldSpaceMb',
    type: 'int',
    default: 64,
    env: 'GATEWAY_RTP_WORKER_OLD_SPACE_MB',
    min: 0,
    max: 4096,
    description:
      "Size the media worker's old generation starts at, MB: until its heap reaches it the worker runs no full garbage collection (each one held every call's next packet for 1.5-7 ms under call churn). 0 keeps V8's default of a few MB.",
  },
  {
    key: 'recording.dir',
    type: 'string',
    default: './data/recordings',
    env: 'GATEWAY_RECORDING_DIR',
    description: 'Directory for stereo WAV recordings.',
  },

  // Calls
  {
    key: 'calls.defaultRingTimeoutSeconds',
    type: 'int',
    default: 30,
    env: 'GATEWAY_RING_TIMEOUT_SECONDS',
    min: 5,
    max: 300,
    description: 'Ring timeout when the agent sets none; then CANCEL → missed.',
  },
  {
    key: 'calls.defaultMaxDurationSeconds',
    type: 'int',
    default: 1800,
    env: 'GATEWAY_MAX_DURATION_SECONDS',
    min: 10,
    description:
      'Maximum call duration when the agent sets none; then BYE → call_maximum_time_reached.',
  },
  {
    key: 'calls.schedulerPollMs',
    type: 'int',
    default: 1000,
    env: 'GATEWAY_SCHEDULER_POLL_MS',
    min: 50,
    description: 'How often the scheduler looks for due scheduled calls and retries.',
  },
  {
    key: 'calls.retryDelayUnitMs',
    type: 'int',
    default: 60000,
    env: 'GATEWAY_RETRY_DELAY_UNIT_MS',
    min: 100,
    max: 60000,
    description:
      'Length of one minute of retryDelayMinutes (a test knob: leave at 60000 in production).',
  },
  {
    key: 'calls.stuckAfterSeconds',
    type: 'int',
    default: 300,
    env: 'GATEWAY_STUCK_AFTER_SECONDS',
    min: 5,
    description:
      'Watchdog: a call in a non-final status this long past its own limits ends with call_stuck.',
  },
  {
    key: 'calls.watchdogIntervalMs',
    type: 'int',
    default: 30000,
    env: 'GATEWAY_WATCHDOG_INTERVAL_MS',
    min: 100,
    description: 'How often the watchdog looks for calls that stopped making progress.',
  },
  // The agent WebSocket's destinations (issue 25 item 5)
  {
    key: 'agent.allowedNetworks',
    type: 'list',
    default: [
      '127.0.0.0/8',
      '::1/128',
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      'fc00::/7',
    ],
    env: 'GATEWAY_AGENT_ALLOWED_NETWORKS',
    description:
      "CIDR blocks an agent's WebSocket URL may reach beside public unicast addresses (default: loopback and private networks, where agents usually run); link-local and metadata addresses (169.254.169.254) and the rest are refused, checked at each connection.",
  },
  // Webhooks (issue 25)
  {
    key: 'webhooks.allowHttp',
    type: 'boolean',
    default: false,
    env: 'GATEWAY_WEBHOOKS_ALLOW_HTTP',
    description: 'Accept http:// webhook URLs (https only when false).',
  },
  {
    key: 'webhooks.allowedNetworks',
    type: 'list',
    default: [],
    env: 'GATEWAY_WEBHOOKS_ALLOWED_NETWORKS',
    description:
      'CIDR blocks webhooks may be delivered to although they are not public unicast (e.g. 10.0.0.0/8); loopback, private, link-local and metadata addresses are refused otherwise, checked on every connection.',
  },
  {
    key: 'webhooks.timeoutMs',
    type: 'int',
    default: 10000,
    env: 'GATEWAY_WEBHOOKS_TIMEOUT_MS',
    min: 100,
    max: 120000,
    description: 'Connect, headers and body timeout of one delivery.',
  },
  {
    key: 'webhooks.retryWindowHours',
    type: 'number',
    default: 24,
    env: 'GATEWAY_WEBHOOKS_RETRY_WINDOW_HOURS',
    min: 0.001,
    max: 720,
    description:
      'A delivery is tried again (network errors, 408, 429, 5xx) until this long after its event; then failed.',
  },
  {
    key: 'webhooks.retryBaseMs',
    type: 'int',
    default: 5000,
    env: 'GATEWAY_WEBHOOKS_RETRY_BASE_MS',
    min: 10,
    max: 3600000,
    description:
      'First retry delay; each next one doubles (capped at one hour), ±20 % jitter; a longer Retry-After wins.',
  },
  {
    key: 'webhooks.concurrency',
    type: 'int',
    default: 16,
    env: 'GATEWAY_WEBHOOKS_CONCURRENCY',
    min: 1,
    max: 256,
    description: 'Deliveries in flight at once.',
  },
  {
    key: 'webhooks.pollIntervalMs',
    type: 'int',
    default: 1000,
    env: 'GATEWAY_WEBHOOKS_POLL_INTERVAL_MS',
    min: 10,
    description:
      'How often the outbox is read for retries that came due (new events are sent at once).',
  },
  {
    key: 'webhooks.retentionDays',
    type: 'number',
    default: 7,
    env: 'GATEWAY_WEBHOOKS_RETENTION_DAYS',
    min: 0.001,
    description: 'Delivered and failed deliveries (and their events) are deleted after this long.',
  },
  {
    key: 'webhooks.secretOverlapSeconds',
    type: 'int',
    default: 86400,
    env: 'GATEWAY_WEBHOOKS_SECRET_OVERLAP_SECONDS',
    min: 0,
    description: 'After rotate-secret, the old secret still signs (beside the new one) this long.',
  },
];

export interface Config {
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    trustProxy: boolean;
    rateLimitMax: number;
    rateLimitWindowMs: number;
    shutdownGraceMs: number;
    maxEventLoopDelayMs: number;
    maxHeapUsedMb: number;
    maxRssMb: number;
    maxCallRequestsInFlight: number;
    overloadRetryAfterSeconds: number;
  };
  store: { path: string; url: string; poolSize: number; timeoutMs: number };
  cluster: {
    nodeId: string;
    internalUrl: string;
    key: string;
    heartbeatSeconds: number;
    lostAfterSeconds: number;
  };
  log: { level: string };
  bootstrap: { apiKey: string };
  sip: {
    engine: 'embedded' | 'drachtio';
    host: string;
    port: number;
    advertisedHost: string;
    transports: Array<'udp' | 'tcp'>;
    t1Ms: number;
    t2Ms: number;
    t4Ms: number;
    userAgent: string;
    authAttempts: number;
    sessionExpiresSeconds: number;
    sessionMinExpiresSeconds: number;
    optionsPingSeconds: number;
    optionsPingFailures: number;
    tlsPort: number;
    tlsCertFile: string;
    tlsKeyFile: string;
    tlsKeepAliveSeconds: number;
    registerRetryMinSeconds: number;
    registerRetryMaxSeconds: number;
    tcpIdleTimeoutMs: number;
    tcpMessageDeadlineMs: number;
    tcpMaxConnections: number;
    tcpMaxConnectionsPerSource: number;
    maxServerTransactions: number;
    maxClientTransactions: number;
    strangers: 'reject' | 'drop' | 'serve';
    allowedSources: string[];
    strangerRateLimit: number;
    strangerBlockSeconds: number;
    udpRecvBufferBytes: number;
    udpSendBufferBytes: number;
  };
  drachtio: { host: string; port: number; secret: string };
  rtp: {
    host: string;
    advertisedIp: string;
    portMin: number;
    portMax: number;
    codecs: Array<'PCMU' | 'PCMA'>;
    symmetric: boolean;
    inactivitySeconds: number;
    worker: boolean;
    workerNice: number;
    workerRealtimePriority: number;
    workerOldSpaceMb: number;
  };
  recording: { dir: string };
  calls: {
    schedulerPollMs: number;
    retryDelayUnitMs: number;
    defaultRingTimeoutSeconds: number;
    defaultMaxDurationSeconds: number;
    stuckAfterSeconds: number;
    watchdogIntervalMs: number;
  };
  agent: { allowedNetworks: string[] };
  webhooks: {
    allowHttp: boolean;
    allowedNetworks: string[];
    timeoutMs: number;
    retryWindowHours: number;
    retryBaseMs: number;
    concurrency: number;
    pollIntervalMs: number;
    retentionDays: number;
    secretOverlapSeconds: number;
  };
}
