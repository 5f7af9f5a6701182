// Generates kamailio.cfg and tls.cfg for the Kamailio test peer (no I/O).
// One script serves every role: TLS edge (tls listener, record-route,
// contact aliases so requests toward a TLS client reuse its connection),
// registrar with digest auth and an in-memory location table, and the
// carrier proxy that relays INVITEs over UDP to a far end. Modules and
// functions as documented for Kamailio 5.6 (/usr/share/doc/kamailio/modules).

export const KAMAILIO_MODULES = '/usr/lib/x86_64-linux-gnu/kamailio/modules/';

/** Every request Kamailio receives is logged as one line starting with this. */
export const REQUEST_LOG_MARK = 'KTEST|';

export interface KamailioUser {
  username: string;
  password: string;
}

export interface KamailioTlsOptions {
  certPath: string;
  keyPath: string;
  /** Ask clients for a certificate and verify it against this CA file (mTLS). Absent: none asked. */
  clientCaPath?: string;
  /** With clientCaPath: refuse a handshake without a valid client certificate (default true). */
  requireClientCertificate?: boolean;
}

export interface KamailioConfigOptions {
  /** Listen on tls:127.0.0.1:<tlsPort> with this certificate. Absent: no TLS listener. */
  tls?: KamailioTlsOptions;
  /** Out-of-dialog INVITEs (and other requests) not for a local user are relayed here over UDP. Absent: 404. */
  forwardTo?: { host: string; port: number };
  /** Subscribers: REGISTER is challenged (401) and checked against these. Default none (every REGISTER 401s). */
  users?: KamailioUser[];
  /** Digest realm of every challenge. Default 'kamailio.test'. */
  realm?: string;
  /** Challenges carry qop="auth" (default true); false: RFC 2069 style, no qop. */
  qop?: boolean;
  /** registrar min_expires: shorter requests are raised to it (or 423, see below). Default 60 (Kamailio's). */
  minExpires?: number;
  /** registrar min_expires_mode: 'raise' (Kamailio's default) or 'reject' (423 with Min-Expires). */
  minExpiresMode?: 'raise' | 'reject';
  /** registrar default_expires: used when the REGISTER carries no expiry. Default 3600. */
  defaultExpires?: number;
  /** registrar max_expires: longer requests are granted only this. Default 0 (no cap). */
  maxExpires?: number;
  /**
   * Where a binding's calls go: 'stream' (default) the REGISTER's source for
   * TCP/TLS (fix_nated_register; calls reuse the client's connection) and
   * the Contact as given for UDP; 'always' the source; 'never' the Contact.
   */
  bindToSource?: 'stream' | 'always' | 'never';
  /** Challenge out-of-dialog INVITEs toward forwardTo with 407 and check them against `users`. Default false. */
  authenticateInvites?: boolean;
  /** Answer 403 to an INVITE toward forwardTo whose From user has no binding. Default false. */
  requireRegistration?: boolean;
}

export interface KamailioPorts {
  udp: number;
  tcp?: number;
  tls?: number;
}

// tm: no provisional response within 4 s → 408; no final within 25 s → 408
// (tests are bounded at 30 s).
const FR_TIMER_MS = 4000;
const FR_INV_TIMER_MS = 25000;

/** A cfg string literal; test values with quotes or line breaks are refused rather than escaped. */
function lit(value: string, what: string): string {
  if (!/^[\w.~!*'()@:;=+$,/%#?&[\]-]*$/.test(value))
    throw new Error(`kamailio config: unsupported character in ${what}: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

export function tlsConfig(tls: KamailioTlsOptions): string {
  const verify = tls.clientCaPath !== undefined;
  const require = verify && (tls.requireClientCertificate ?? true);
  const lines = [
    '[server:default]',
    'method = TLSv1.2+',
    `verify_certificate = ${verify ? 'yes' : 'no'}`,
    `require_certificate = ${require ? 'yes' : 'no'}`,
    `certificate = ${tls.certPath}`,
    `private_key = ${tls.keyPath}`,
    ...(verify ? [`ca_list = ${tls.clientCaPath}`] : []),
    '',
    // Kamailio as a TLS client (toward a TLS-registered contact): no checks.
    '[client:default]',
    'method = TLSv1.2+',
    'verify_certificate = no',
    'require_certificate = no',
    '',
  ];
  return lines.join('\n');
}

export function kamailioConfig(
  o: KamailioConfigOptions,
  ports: KamailioPorts,
  dir: string,
): string {
  const users = o.users ?? [];
  const realm = lit(o.realm ?? 'kamailio.test', 'realm');
  const challengeFlags = o.qop === false ? '"0"' : '"1"';
  const listen = [
    `listen=udp:127.0.0.1:${ports.udp}`,
    ...(ports.tcp ? [`listen=tcp:127.0.0.1:${ports.tcp}`] : []),
    ...(ports.tls ? [`listen=tls:127.0.0.1:${ports.tls}`] : []),
  ];
  const passwords = users
    .map(
      (u, i) =>
        `  ${i ? 'else ' : ''}if ($au == ${lit(u.username, 'username')}) $var(pw) = ${lit(u.password, 'password')};`,
    )
    .join('\n');
  const toSubscriber = users.length
    ? `  if (${users.map((u) => `$rU == ${lit(u.username, 'username')}`).join(' || ')}) {
    # toward a subscriber: its binding, if any
    if (!lookup("location")) {
      sl_send_reply("480", "Temporarily Unavailable");
      exit;
    }
    route(RELAY);
    exit;
  }
`
    : '';
  const inviteAuth = o.authenticateInvites
    ? `  route(PASSWORD);
  if (!pv_auth_check(${realm}, "$var(pw)", "0", "0")) {
    auth_challenge(${realm}, ${challengeFlags});
    exit;
  }
  consume_credentials();
`
    : '';
  const registeredOnly = o.requireRegistration
    ? `  if (!registered("location", "$fu")) {
    sl_send_reply("403", "Not Registered");
    exit;
  }
`
    : '';
  const bind = o.bindToSource ?? 'stream';
  const fixNated =
    bind === 'never'
      ? ''
      : `  # the binding points at the REGISTER's source (and reuses its TCP/TLS connection)
  ${bind === 'stream' ? 'if ($proto == "tls" || $proto == "tcp") ' : ''}fix_nated_register();
`;
  const forward = o.forwardTo
    ? `  $du = "sip:${o.forwardTo.host}:${o.forwardTo.port};transport=udp";\n  route(RELAY);`
    : '  sl_send_reply("404", "Not Found");';

  return `#!KAMAILIO
# Generated by sip-test/support/kamailio-config.ts; runs in ${dir}.
debug=2
log_stderror=yes
children=2
tcp_children=2
disable_sctp=yes
auto_aliases=no
dns=no
rev_dns=no
use_dns_cache=off
dns_try_ipv6=no
# RFC 5626 §3.5.1: a CRLFCRLF ping on TCP/TLS gets a CRLF pong (Kamailio's default, kept explicit).
tcp_crlf_ping=yes
tcp_connection_lifetime=3605
enable_tls=${ports.tls ? 'yes' : 'no'}
${listen.join('\n')}

mpath="${KAMAILIO_MODULES}"
loadmodule "kex.so"
loadmodule "corex.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "rr.so"
loadmodule "pv.so"
loadmodule "maxfwd.so"
loadmodule "textops.so"
loadmodule "siputils.so"
loadmodule "xlog.so"
loadmodule "ctl.so"
loadmodule "usrloc.so"
loadmodule "registrar.so"
loadmodule "auth.so"
loadmodule "nathelper.so"
${ports.tls ? 'loadmodule "tls.so"' : ''}

modparam("ctl", "binrpc", "unix:${dir}/kamailio_ctl")
modparam("tm", "fr_timer", ${FR_TIMER_MS})
modparam("tm", "fr_inv_timer", ${FR_INV_TIMER_MS})
modparam("rr", "enable_double_rr", 1)
# In memory only; expired bindings are swept every second.
modparam("usrloc", "db_mode", 0)
modparam("usrloc", "timer_interval", 1)
modparam("registrar", "min_expires", ${o.minExpires ?? 60})
modparam("registrar", "min_expires_mode", ${o.minExpiresMode === 'reject' ? 1 : 0})
modparam("registrar", "default_expires", ${o.defaultExpires ?? 3600})
modparam("registrar", "max_expires", ${o.maxExpires ?? 0})
modparam("registrar", "received_avp", "$avp(RECEIVED)")
modparam("nathelper", "received_avp", "$avp(RECEIVED)")
${ports.tls ? `modparam("tls", "config", "${dir}/tls.cfg")` : ''}

request_route {
  xlog("L_NOTICE", "${REQUEST_LOG_MARK}rm=$rm|ru=$ru|fU=$fU|tU=$tU|au=$au|exp=$hdr(Expires)|ct=$ct|proto=$proto|src=$si:$sp|ci=$ci\\n");
  if (!mf_process_maxfwd_header("10")) {
    sl_send_reply("483", "Too Many Hops");
    exit;
  }
  if (is_method("OPTIONS") && !has_totag()) {
    sl_send_reply("200", "OK");
    exit;
  }
  if (has_totag()) {
    route(WITHINDLG);
    exit;
  }
  if (is_method("CANCEL")) {
    if (t_check_trans()) route(RELAY);
    exit;
  }
  if (is_method("ACK")) {
    if (t_check_trans()) t_relay();
    exit;
  }
  # absorb retransmissions of requests already being relayed
  t_check_trans();
  if (is_method("REGISTER")) {
    route(REGISTRAR);
    exit;
  }
  remove_hf("Route");
${toSubscriber}${inviteAuth}${registeredOnly}${forward}
}

route[PASSWORD] {
  $var(pw) = "";
${passwords}
}

route[REGISTRAR] {
  route(PASSWORD);
  if (!pv_auth_check(${realm}, "$var(pw)", "0", "0")) {
    auth_challenge(${realm}, ${challengeFlags});
    exit;
  }
  consume_credentials();
${fixNated}  if (!save("location")) sl_reply_error();
}

route[WITHINDLG] {
  if (loose_route()) {
    if ($ru =~ ";alias=") handle_ruri_alias();
    route(RELAY);
    exit;
  }
  # ACK of a negative final response: hop by hop, absorbed by tm
  if (is_method("ACK") && t_check_trans()) {
    t_relay();
    exit;
  }
  # No Route header but a target elsewhere: SIPp far ends do not copy
  # Record-Route into their responses, so their peers keep no route set.
  if (uri != myself) {
    if ($ru =~ ";alias=") handle_ruri_alias();
    route(RELAY);
    exit;
  }
  if (!is_method("ACK")) sl_send_reply("404", "Not Here");
}

route[RELAY] {
  if (!has_totag() && is_method("INVITE|SUBSCRIBE|REFER")) record_route();
  # a TLS/TCP client's Contact gets ;alias=ip~port~proto: requests toward it reuse its connection
  if (($proto == "tls" || $proto == "tcp") && is_method("INVITE|SUBSCRIBE|REFER|UPDATE|NOTIFY"))
    add_contact_alias();
  t_on_reply("REPLY");
  if (!t_relay()) sl_reply_error();
  exit;
}

onreply_route[REPLY] {
  if (($proto == "tls" || $proto == "tcp") && is_present_hf("Contact")) add_contact_alias();
}
`;
}
