// Values that end up in a SIP message (a trunk's host, credentials, extra
// headers, caller IDs, tech prefix) are checked where they enter the
// gateway, the API and the CLI, so nothing unsafe reaches the wire: RFC 3261
// §7.3.1 ends a header field at CRLF, so a CR or LF inside a value would
// start a header of the sender's choosing; NUL and the other controls have
// no place in one either (§25.1: TEXT-UTF8 excludes CTLs; HTAB is LWS). The
// SIP stack refuses them too, as a second line.

/** JSON-schema pattern: no control character but HTAB. */
export const SIP_TEXT_PATTERN = '^[^\\u0000-\\u0008\\u000A-\\u001F\\u007F]*$';
/** A host name, IPv4 or bracketed IPv6 address. */
export const SIP_HOST_PATTERN = '^[A-Za-z0-9.:\\[\\]-]+$';
/** An extension header the trunk may add (RFC 3261 §25.1 token, X- prefixed). */
export const SIP_HEADER_NAME_PATTERN = '^[Xx]-[A-Za-z0-9-]+$';
/** A header a call request may add to its INVITE: an X- extension header or User-to-User (RFC 7433). */
export const CALL_HEADER_NAME_PATTERN = '^(?:[Xx]-[A-Za-z0-9-]{1,64}|[Uu]ser-[Tt]o-[Uu]ser)$';
/** The most a call request's headers may add to its INVITE, names and values together. */
export const CALL_HEADERS_MAX_BYTES = 2048;
export const E164_PATTERN = '^\\+[1-9][0-9]{6,14}$';
export const TECH_PREFIX_PATTERN = '^[0-9#*]{0,10}$';
/** A request's outBoundCallerIdPrefix: digits, an optional leading +. */
export const CALLER_ID_PREFIX_PATTERN = '^\\+?[0-9]{1,15}$';
/** An outbound route's prefix: + and up to 15 digits. */
export const ROUTE_PREFIX_PATTERN = '^\\+[0-9]{0,15}$';

const TEXT = new RegExp(SIP_TEXT_PATTERN);
const HOST = new RegExp(SIP_HOST_PATTERN);
const HEADER_NAME = new RegExp(SIP_HEADER_NAME_PATTERN);
const E164 = new RegExp(E164_PATTERN);
const TECH_PREFIX = new RegExp(TECH_PREFIX_PATTERN);

export interface SipBoundTrunkFields {
  host: string;
  username: string | null;
  password: string | null;
  headers: Record<string, string>;
  callerIds: string[];
  defaultCallerId: string | null;
  techPrefix: string;
}

/** The first SIP-bound field of a trunk that is unsafe or malformed, by name; undefined when all are fine. */
export function unsafeTrunkField(t: SipBoundTrunkFields): string | undefined {
  if (!HOST.test(t.host)) return 'host';
  if (t.username !== null && !TEXT.test(t.username)) return 'username';
  if (t.password !== null && !TEXT.test(t.password)) return 'password';
  for (const [name, value] of Object.entries(t.headers)) {
    if (!HEADER_NAME.test(name)) return 'headers';
    if (!TEXT.test(value)) return `headers.${name}`;
  }
  if (t.defaultCallerId !== null && !E164.test(t.defaultCallerId)) return 'defaultCallerId';
  if (t.callerIds.some((c) => !E164.test(c))) return 'callerIds';
  if (!TECH_PREFIX.test(t.techPrefix)) return 'techPrefix';
  return undefined;
}
