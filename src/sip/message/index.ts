// The SIP message layer: parser, serialiser, header access and the
// structured readers. Lower SIP layers import from here only.

export * from './types.js';
export { parseMessage } from './parse-message.js';
export { findMessageLength, MAX_HEAD_BYTES } from './find-message-length.js';
export { serializeMessage } from './serialize-message.js';
export { getHeader, getHeaders, setHeader, addHeader, removeHeader, splitList } from './headers.js';
export { canonicalHeaderName, isListHeader, wireHeaderName } from './header-names.js';
export { parseUri, formatUri, unescapeUri } from './uri.js';
export { parseNameAddr, formatNameAddr } from './name-addr.js';
export { parseVia, formatVia } from './via.js';
export { parseCSeq, formatCSeq, MAX_CSEQ } from './cseq.js';
export { parseReason, findQ850Cause } from './reason.js';
export { parseWarning } from './warning.js';
export { parseChallenge, parseAuthParams } from './challenge.js';
export {
  generateBranch,
  generateTag,
  generateCallId,
  randomToken,
  MAGIC_COOKIE,
} from './random-ids.js';
export {
  checkIncomingRequest,
  type RequestCheckOptions,
  type RequestRejection,
} from './request-checks.js';
export { checkIncomingResponse } from './response-checks.js';
