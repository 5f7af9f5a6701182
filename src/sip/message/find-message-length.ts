// RFC 3261 §18.3 stream framing: a message on TCP ends Content-Length octets
// after the empty line closing its header section.

import { findHeadBounds, parseContentLength, skipLeadingLineBreaks } from './parse-message.js';
import { SipParseError } from './types.js';

/** Header sections larger than this cannot be framed (a peer streaming
 *  garbage must not make us buffer forever). */
export const MAX_HEAD_BYTES = 65_536;

/**
 * Length in bytes, counted from `offset`, of the next complete message in a
 * stream buffer (leading CRLF keep-alives included), or -1 when more bytes
 * are needed. A missing Content-Length counts as 0 (RFC 3261 §18.3 makes it
 * mandatory on streams). Throws SipParseError when the stream cannot be
 * framed: a bad or conflicting Content-Length, or a header section over
 * MAX_HEAD_BYTES.
 */
export function findMessageLength(buf: Buffer, offset = 0): number {
  const start = skipLeadingLineBreaks(buf, offset);
  if (start >= buf.length) return -1;
  const bounds = findHeadBounds(buf, start);
  if (!bounds) {
    if (buf.length - start > MAX_HEAD_BYTES) throw new SipParseError('header section too large');
    return -1;
  }
  if (bounds.headEnd - start > MAX_HEAD_BYTES) throw new SipParseError('header section too large');
  // latin1 keeps string offsets equal to byte offsets; names are ASCII.
  const head = buf.toString('latin1', start, bounds.headEnd);
  let length = -1;
  let pos = head.indexOf('\n') + 1;
  while (pos > 0 && pos < head.length) {
    const c = head.charCodeAt(pos) | 0x20;
    if (c === 0x63 /* c */ || c === 0x6c /* l */) {
      const colon = head.indexOf(':', pos);
      const eol = head.indexOf('\n', pos);
      if (colon > 0 && (eol < 0 || colon < eol)) {
        const name = head.slice(pos, colon).trimEnd().toLowerCase();
        if (name === 'content-length' || name === 'l') {
          const n = parseContentLength(head.slice(colon + 1, eol < 0 ? head.length : eol).trim());
          if (n < 0) throw new SipParseError('bad Content-Length');
          if (length >= 0 && n !== length) throw new SipParseError('conflicting Content-Length');
          length = n;
        }
      }
    }
    pos = head.indexOf('\n', pos) + 1;
  }
  const total = bounds.bodyStart + Math.max(length, 0);
  return total <= buf.length ? total - offset : -1;
}
