// A reply for a request the parser rejected but which carries enough to be
// answered (RFC 3261 §8.2.2.1 / §21.4.1 400, §8.2.2 505). The parser gives us
// no partial message, so we pick the few header lines a response must copy
// (§8.2.6.2) straight from the raw bytes.

/** RFC 3261 §8.2.6.2: Via, From, To, Call-ID and CSeq are copied; long and
 *  compact (§7.3.3) forms, lower-cased. */
const COPIED = new Map<string, string>([
  ['via', 'Via'],
  ['v', 'Via'],
  ['from', 'From'],
  ['f', 'From'],
  ['to', 'To'],
  ['t', 'To'],
  ['call-id', 'Call-ID'],
  ['i', 'Call-ID'],
  ['cseq', 'CSeq'],
]);

const REASONS: Record<number, string> = { 400: 'Bad Request', 505: 'Version Not Supported' };

/** Builds the response bytes, or undefined when the datagram is not an
 *  answerable request (a response, an ACK, no Via/CSeq/Call-ID). */
export function buildBadRequestReply(
  buf: Buffer,
  status: 400 | 505,
  userAgent?: string,
): Buffer | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  const text = buf.toString('latin1', 0, headEnd < 0 ? Math.min(buf.length, 8192) : headEnd);
  const lines = text.split(/\r?\n/);
  const first = lines[0] ?? '';
  if (first.startsWith('SIP/') || first.startsWith('ACK ')) return undefined;
  const out: string[] = [`SIP/2.0 ${status} ${REASONS[status]}`];
  const seen = new Set<string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = COPIED.get(line.slice(0, colon).trim().toLowerCase());
    if (!name) continue;
    const value = line.slice(colon + 1).trim();
    if (!value || /[\r\n]/.test(value)) continue;
    seen.add(name);
    out.push(`${name}: ${value}`);
  }
  if (!seen.has('Via') || !seen.has('CSeq') || !seen.has('Call-ID')) return undefined;
  if (userAgent) out.push(`Server: ${userAgent}`);
  out.push('Content-Length: 0', '', '');
  return Buffer.from(out.join('\r\n'), 'latin1');
}
