// The ACK a client INVITE transaction sends for a non-2xx final response.

import type { SipHeader, SipRequest, SipResponse } from '../message/types.js';

/** RFC 3261 §17.1.1.3: same Request-URI, Call-ID, From, CSeq number and top
 *  Via (branch) as the INVITE, To from the response, the INVITE's Route set. */
export function buildNon2xxAck(invite: SipRequest, res: SipResponse): SipRequest {
  const headers: SipHeader[] = [];
  let viaDone = false;
  let cseq = '';
  for (const h of invite.headers) {
    switch (h.name) {
      case 'via':
        if (!viaDone) headers.push({ name: 'via', value: firstValue(h.value) });
        viaDone = true;
        break;
      case 'from':
      case 'call-id':
      case 'route':
        headers.push(h);
        break;
      case 'cseq':
        cseq = h.value;
        break;
      default:
        break;
    }
  }
  const to = res.headers.find((h) => h.name === 'to');
  if (to) headers.push(to);
  headers.push({ name: 'cseq', value: `${parseInt(cseq, 10)} ACK` });
  headers.push({ name: 'max-forwards', value: '70' });
  headers.push({ name: 'content-length', value: '0' });
  return {
    kind: 'request',
    method: 'ACK',
    uri: invite.uri,
    version: 'SIP/2.0',
    headers,
    body: Buffer.alloc(0),
  };
}

function firstValue(value: string): string {
  const comma = value.indexOf(',');
  return comma < 0 ? value : value.slice(0, comma).trim();
}
