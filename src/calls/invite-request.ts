// Builds the INVITE for one attempt from the trunk's settings: the number in
// the trunk's format (leading + or not, tech prefix) in the Request-URI and
// To, the caller presented as the trunk's identity settings say (From user
// and display name; P-Asserted-Identity and/or P-Preferred-Identity, RFC
// 3325; Diversion, RFC 5806; a withheld caller ID anonymous with
// `Privacy: id`, RFC 3323), the trunk's
// extra headers, the call's own (X- and User-to-User, RFC 7433; they replace
// a trunk header of the same name) and digest credentials.
import { DEFAULT_TRUNK_IDENTITY, type SipTrunk, type TrunkIdentity } from '../model/entities.js';
import type { DialRequest, TlsTrunkMaterial } from './ports/signaling-port.js';

export function buildDialRequest(
  trunk: SipTrunk,
  number: string,
  callerId: string | null,
  sdp: string,
  callHeaders: Record<string, string> = {},
): Omit<DialRequest, 'answerOffer'> {
  const user = trunkUser(trunk, number);
  const callerUri = callerUriOf(trunk, callerId);
  const identity = trunk.identity ?? DEFAULT_TRUNK_IDENTITY;
  const headers: Array<[string, string]> = [];
  if (callerId !== null) {
    if (identity.assertedIdentity === 'pai' || identity.assertedIdentity === 'both') {
      headers.push(['P-Asserted-Identity', `<${callerUri}>`]);
    }
    if (identity.assertedIdentity === 'ppi' || identity.assertedIdentity === 'both') {
      headers.push(['P-Preferred-Identity', `<${callerUri}>`]);
    }
    if (identity.diversion) headers.push(['Diversion', `<${callerUri}>;reason=unconditional`]);
  } else headers.push(['Privacy', 'id']);
  const own = new Set(Object.keys(callHeaders).map((n) => n.toLowerCase()));
  for (const [name, value] of Object.entries(trunk.headers)) {
    if (!own.has(name.toLowerCase())) headers.push([name, value]);
  }
  for (const [name, value] of Object.entries(callHeaders)) headers.push([name, value]);
  return {
    target: {
      host: trunk.host,
      ...(trunk.port ? { port: trunk.port } : {}),
      transport: trunk.transport,
      ...withTls(tlsMaterialOf(trunk)),
    },
    requestUri: userAtTrunkUri(trunk, user),
    from: fromOf(trunk, identity, callerId, callerUri),
    to: { uri: userAtTrunkUri(trunk, user, false) },
    headers,
    sdp,
    ...credentialsOf(trunk),
  };
}

/** From: the caller ID's URI, or the trunk's username or fixed user at the trunk host; anonymous when withheld. */
function fromOf(
  trunk: SipTrunk,
  identity: TrunkIdentity,
  callerId: string | null,
  callerUri: string,
): DialRequest['from'] {
  if (callerId === null) return { uri: callerUri, displayName: 'Anonymous' };
  const user =
    identity.fromUser === 'username'
      ? (trunk.username ?? (trunk.register?.enabled ? trunk.register.username : null))
      : identity.fromUser === 'fixed'
        ? identity.fixedFromUser
        : null;
  const uri = user ? `sip:${user}@${trunk.host}` : callerUri;
  return { uri, ...(identity.displayName ? { displayName: identity.displayName } : {}) };
}

/** The number as the trunk wants it in a user part (leading + or not, tech prefix). */
function trunkUser(trunk: SipTrunk, number: string): string {
  return (
    trunk.techPrefix +
    (trunk.numberFormat === 'e164_without_plus' ? number.replace(/^\+/, '') : number)
  );
}

function trunkHostPort(trunk: SipTrunk): string {
  return trunk.port ? `${trunk.host}:${trunk.port}` : trunk.host;
}

/** The caller ID as a URI, as From carries it. */
export function callerUriOf(trunk: SipTrunk, callerId: string | null): string {
  if (callerId === null) return 'sip:anonymous@anonymous.invalid';
  return callerId.startsWith('sip') ? callerId : `sip:${callerId}@${trunk.host}`;
}

/** A number at the trunk, as an INVITE's Request-URI names it (a blind transfer's Refer-To). */
export function numberAtTrunkUri(trunk: SipTrunk, number: string): string {
  return userAtTrunkUri(trunk, trunkUser(trunk, number));
}

/** A user at the trunk: `sips:` when the trunk asks for it (RFC 3261 §19.1),
 *  else `sip:` with the transport parameter (in a Request-URI). */
function userAtTrunkUri(trunk: SipTrunk, user: string, withTransport = true): string {
  const hostPort = trunkHostPort(trunk);
  if (trunk.transport === 'tls' && trunk.tls?.sipsUri) return `sips:${user}@${hostPort}`;
  const param = withTransport && trunk.transport !== 'udp' ? `;transport=${trunk.transport}` : '';
  return `sip:${user}@${hostPort}${param}`;
}

/** Digest credentials for the INVITE: the trunk's, else its registration's. */
function credentialsOf(trunk: SipTrunk): { credentials?: { username: string; password: string } } {
  if (trunk.username && trunk.password)
    return { credentials: { username: trunk.username, password: trunk.password } };
  const r = trunk.register;
  if (r?.enabled && r.password)
    return { credentials: { username: r.authUsername ?? r.username, password: r.password } };
  return {};
}

const withTls = (tls: TlsTrunkMaterial | undefined) => (tls ? { tls } : {});

/** A TLS trunk's own CA bundle and client certificate, when it has any. */
export function tlsMaterialOf(trunk: SipTrunk): TlsTrunkMaterial | undefined {
  const t = trunk.tls;
  if (trunk.transport !== 'tls' || !t || (t.caPem === null && t.clientCertPem === null))
    return undefined;
  return {
    profile: trunk.id,
    ...(t.caPem !== null ? { ca: t.caPem } : {}),
    ...(t.clientCertPem !== null && t.clientKeyPem !== null
      ? { cert: t.clientCertPem, key: t.clientKeyPem }
      : {}),
  };
}
