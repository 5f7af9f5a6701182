// Building a response to a request (RFC 3261 §8.2.6).

import type { SipHeader, SipRequest, SipResponse } from '../message/types.js';

export interface ResponseOptions {
  /** Added to To when the request's To has no tag (§8.2.6.2). */
  toTag?: string;
  /** Extra headers, canonical lower-case names. */
  headers?: ReadonlyArray<readonly [string, string]>;
  body?: string | Buffer;
  contentType?: string;
}

const EMPTY = Buffer.alloc(0);

/** §8.2.6.2: Via (all, in order), From, To (+tag), Call-ID, CSeq are copied;
 *  a 100 also copies Timestamp (§8.2.6.1). */
export function createResponse(
  req: SipRequest,
  status: number,
  reason: string,
  opts: ResponseOptions = {},
): SipResponse {
  const headers: SipHeader[] = [];
  for (const h of req.headers) {
    const n = h.name;
    if (n === 'via' || n === 'from' || n === 'call-id' || n === 'cseq') headers.push(h);
    else if (n === 'to') {
      const needTag = opts.toTag !== undefined && status !== 100 && !/;\s*tag=/i.test(h.value);
      headers.push(needTag ? { name: 'to', value: `${h.value};tag=${opts.toTag}` } : h);
    } else if (n === 'timestamp' && status === 100) headers.push(h);
  }
  if (opts.headers) for (const [name, value] of opts.headers) headers.push({ name, value });
  const body =
    opts.body === undefined
      ? EMPTY
      : typeof opts.body === 'string'
        ? Buffer.from(opts.body)
        : opts.body;
  if (body.length > 0 && opts.contentType)
    headers.push({ name: 'content-type', value: opts.contentType });
  headers.push({ name: 'content-length', value: String(body.length) });
  return { kind: 'response', version: 'SIP/2.0', status, reason, headers, body };
}
