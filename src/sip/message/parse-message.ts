// RFC 3261 §7 message parser: start line, header lines (raw, canonical
// names, unfolded values) and the body framed by Content-Length. Header
// values are not interpreted here; the structured readers do that on demand.

import { canonicalOrUndefined } from './header-names.js';
import { isTokenChar } from './lexer.js';
import { SipParseError, type SipHeader, type SipMessage, type SipRequest } from './types.js';

const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
const LFLF = Buffer.from('\n\n', 'latin1');
const LFCRLF = Buffer.from('\n\r\n', 'latin1');

/** Where the header section ends: `headEnd` is after the last header line's
 *  line break, `bodyStart` after the empty line. */
interface HeadBounds {
  headEnd: number;
  bodyStart: number;
}

/** RFC 3261 §7.5: CRLFs before the start line are ignored. */
export function skipLeadingLineBreaks(buf: Buffer, i: number): number {
  while (i < buf.length && (buf[i] === 0x0d || buf[i] === 0x0a)) i++;
  return i;
}

/** Finds the empty line ending the header section (CRLF, bare LF or a mix). */
export function findHeadBounds(buf: Buffer, start: number): HeadBounds | undefined {
  const crlf = buf.indexOf(CRLFCRLF, start);
  // A message with bare-LF line ends may still carry CRLFCRLF in its body, so
  // the LF forms are looked for before it (only in the head part).
  const limit = crlf < 0 ? buf.length : crlf;
  const lf = indexBefore(buf, LFLF, start, limit);
  const mixed = indexBefore(buf, LFCRLF, start, limit);
  let best: HeadBounds | undefined =
    crlf >= 0 ? { headEnd: crlf + 2, bodyStart: crlf + 4 } : undefined;
  if (lf >= 0 && (mixed < 0 || lf <= mixed)) best = { headEnd: lf + 1, bodyStart: lf + 2 };
  else if (mixed >= 0) best = { headEnd: mixed + 1, bodyStart: mixed + 3 };
  return best;
}

function indexBefore(buf: Buffer, needle: Buffer, start: number, limit: number): number {
  if (limit - start < needle.length) return -1;
  // Searching a view keeps a long body out of the scan.
  const at = buf.subarray(0, limit + needle.length - 1).indexOf(needle, start);
  return at >= 0 && at < limit ? at : -1;
}

/** s[from, to) without leading/trailing SP and HTAB (String#trim would also
 *  eat Unicode spaces such as U+FEFF that belong to the value). */
function trimLws(s: string, from: number, to: number): string {
  while (from < to && (s.charCodeAt(from) === 0x20 || s.charCodeAt(from) === 0x09)) from++;
  while (to > from && (s.charCodeAt(to - 1) === 0x20 || s.charCodeAt(to - 1) === 0x09)) to--;
  return s.slice(from, to);
}

/** RFC 3261 §20.14: Content-Length = 1*DIGIT. */
export function parseContentLength(value: string): number {
  if (value.length === 0 || value.length > 15) return -1;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const d = value.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

const EMPTY = Buffer.alloc(0);
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const VERSION = /^SIP\/\d+\.\d+$/i;

interface StartLine {
  msg: SipMessage;
  /** 400/505 for a request whose start line is malformed; 0 when fine;
   *  -1 for a response or a line too broken to be treated as a request. */
  error: number;
  why: string;
}

/** RFC 3261 §7.1 Request-Line / §7.2 Status-Line. */
function parseStartLine(line: string): StartLine {
  if (line.length >= 4 && line.slice(0, 4).toUpperCase() === 'SIP/') {
    // Status-Line = SIP-Version SP Status-Code SP Reason-Phrase
    const sp1 = line.indexOf(' ');
    const version = sp1 < 0 ? line : line.slice(0, sp1);
    const sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
    const code = sp1 < 0 ? '' : line.slice(sp1 + 1, sp2 < 0 ? line.length : sp2);
    const status = code.length === 3 ? parseContentLength(code) : -1;
    const msg: SipMessage = {
      kind: 'response',
      version: version.toUpperCase(),
      status,
      reason: sp2 < 0 ? '' : line.slice(sp2 + 1),
      headers: [],
      body: EMPTY,
    };
    if (msg.version !== 'SIP/2.0') return { msg, error: -1, why: 'unsupported SIP version' };
    if (status < 100 || status > 699) return { msg, error: -1, why: 'bad status code' };
    return { msg, error: 0, why: '' };
  }
  // Request-Line = Method SP Request-URI SP SIP-Version (single SPs)
  const trimmed = line.trimEnd();
  const sp1 = trimmed.indexOf(' ');
  const sp2 = trimmed.lastIndexOf(' ');
  const method = sp1 < 0 ? trimmed : trimmed.slice(0, sp1);
  const uri = sp1 < 0 ? '' : trimmed.slice(sp1 + 1, sp2);
  const version = sp2 < 0 ? '' : trimmed.slice(sp2 + 1);
  const msg: SipRequest = {
    kind: 'request',
    method,
    uri,
    version: version.toUpperCase(),
    headers: [],
    body: EMPTY,
  };
  if (sp1 < 0 || sp1 === sp2 || !VERSION.test(version)) {
    return { msg, error: -1, why: 'not a request line' };
  }
  if (msg.version !== 'SIP/2.0') return { msg, error: 505, why: 'unsupported SIP version' };
  if (trimmed.length !== line.length) return { msg, error: 400, why: 'trailing whitespace' };
  for (let i = 0; i < method.length; i++) {
    if (!isTokenChar(method.charCodeAt(i))) return { msg, error: 400, why: 'bad method' };
  }
  // RFC 3261 §25.1: the Request-URI holds no LWS and is an absolute URI
  // (RFC 4475 §3.1.2.11-13 lwsruri, lwsstart, ltgtruri).
  if (!SCHEME.test(uri) || /[\s<>"]/.test(uri)) return { msg, error: 400, why: 'bad Request-URI' };
  return { msg, error: 0, why: '' };
}

function reject(sl: StartLine, why: string, status?: number): never {
  const s = status ?? sl.error;
  if (sl.msg.kind === 'request' && (s === 400 || s === 505)) {
    throw new SipParseError(why, s, sl.msg as SipRequest);
  }
  throw new SipParseError(why);
}

/**
 * Parses one SIP message: a whole datagram, or one frame that
 * `findMessageLength` delimited in a stream. Throws SipParseError; its
 * `status` (400/505) says a request deserves an answer, and `request` holds
 * what parsed of it. The body is a copy (the input buffer may be reused).
 */
export function parseMessage(buf: Buffer): SipMessage {
  const start = skipLeadingLineBreaks(buf, 0);
  const bounds = findHeadBounds(buf, start);
  const head = buf.toString('utf8', start, bounds ? bounds.headEnd : buf.length);
  let eol = head.indexOf('\n');
  if (eol < 0) eol = head.length;
  const sl = parseStartLine(
    head.slice(0, eol > 0 && head.charCodeAt(eol - 1) === 13 ? eol - 1 : eol),
  );
  if (sl.error === -1) reject(sl, sl.why);

  const headers: SipHeader[] = sl.msg.headers;
  let contentLength = -2; // -2 absent, -1 invalid
  let error = '';
  // A datagram without the empty line (RFC 4475 baddn ends that way) is
  // read as all header; a Content-Length above 0 then fails below.
  let bodyStart = bounds ? bounds.bodyStart : buf.length;
  let pos = eol + 1;
  let last: SipHeader | undefined;
  while (pos < head.length) {
    let end = head.indexOf('\n', pos);
    if (end < 0) end = head.length;
    const lineEnd = end > pos && head.charCodeAt(end - 1) === 13 ? end - 1 : end;
    if (lineEnd === pos) {
      // An empty line before the one findHeadBounds saw: the head ends here.
      bodyStart = start + Buffer.byteLength(head.slice(0, end + 1), 'utf8');
      break;
    }
    const c0 = head.charCodeAt(pos);
    if (c0 === 0x20 || c0 === 0x09) {
      // RFC 3261 §7.3.1: a line starting with LWS continues the previous one.
      const more = trimLws(head, pos, lineEnd);
      if (!last) error ||= 'continuation line before any header';
      else if (more) last.value = last.value ? last.value + ' ' + more : more;
    } else {
      const colon = head.indexOf(':', pos);
      if (colon < 0 || colon >= lineEnd) {
        error ||= 'header line without colon';
      } else {
        // RFC 3261 §7.3.1: HCOLON = *( SP / HTAB ) ":" SWS
        let ne = colon;
        while (ne > pos && (head.charCodeAt(ne - 1) === 0x20 || head.charCodeAt(ne - 1) === 0x09))
          ne--;
        const name = canonicalOrUndefined(head.slice(pos, ne));
        if (name === undefined) {
          error ||= 'bad header name';
        } else {
          last = { name, value: trimLws(head, colon + 1, lineEnd) };
          headers.push(last);
        }
      }
    }
    pos = end + 1;
  }
  if (sl.error > 0) reject(sl, sl.why);
  if (error) reject(sl, error, 400);

  // RFC 3261 §20.14 / §18.3: Content-Length frames the body; several values
  // that disagree leave the framing unknown (RFC 4475 §3.3.9 mcl01).
  for (let i = 0; i < headers.length; i++) {
    const h = headers[i]!;
    if (h.name !== 'content-length') continue;
    const n = parseContentLength(h.value);
    if (n < 0) reject(sl, 'bad Content-Length', 400);
    if (contentLength >= 0 && n !== contentLength) reject(sl, 'conflicting Content-Length', 400);
    contentLength = n;
  }
  let bodyEnd = buf.length;
  if (contentLength >= 0) {
    // RFC 3261 §18.3: octets beyond Content-Length in a datagram are dropped;
    // fewer octets than announced is an error (RFC 4475 §3.1.2.2 clerr).
    if (bodyStart + contentLength > buf.length) reject(sl, 'Content-Length beyond message', 400);
    bodyEnd = bodyStart + contentLength;
  }
  sl.msg.body = bodyEnd > bodyStart ? Buffer.from(buf.subarray(bodyStart, bodyEnd)) : EMPTY;
  return sl.msg;
}
