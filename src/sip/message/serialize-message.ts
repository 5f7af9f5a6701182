// RFC 3261 §7 serialisation: start line, header lines in order, one
// Content-Length that matches the body (§20.14), empty line, body.

import { wireHeaderName } from './header-names.js';
import type { SipMessage } from './types.js';

/** The message as bytes. Content-Length is written (in place of the first
 *  one, or last) with the body's length; the message itself is not changed. */
export function serializeMessage(msg: SipMessage): Buffer {
  let s =
    msg.kind === 'request'
      ? msg.method + ' ' + msg.uri + ' ' + (msg.version || 'SIP/2.0') + '\r\n'
      : (msg.version || 'SIP/2.0') + ' ' + msg.status + ' ' + msg.reason + '\r\n';
  const body = msg.body;
  let lengthDone = false;
  const hs = msg.headers;
  for (let i = 0; i < hs.length; i++) {
    const h = hs[i]!;
    if (h.name === 'content-length') {
      if (!lengthDone) s += 'Content-Length: ' + body.length + '\r\n';
      lengthDone = true;
      continue;
    }
    s += wireHeaderName(h.name) + ': ' + h.value + '\r\n';
  }
  if (!lengthDone) s += 'Content-Length: ' + body.length + '\r\n';
  s += '\r\n';
  const headLen = Buffer.byteLength(s, 'utf8');
  const out = Buffer.allocUnsafe(headLen + body.length);
  out.write(s, 0, 'utf8');
  body.copy(out, headLen);
  return out;
}
