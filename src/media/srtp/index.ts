/**
 * SRTP and SRTCP (RFC 3711) keyed by SDP Security Descriptions (RFC 4568).
 * Pure: no I/O, no timers, no logging; the caller counts the drops.
 *
 *   const ours = generateSdesCryptoAttribute(1);        // offer formatSdesCryptoAttribute(ours)
 *   const theirs = parseSdesCryptoAttribute(answer);    // { ok: true, attribute } or
 *                                                       // { ok: false, reason, message }
 *   const sender = new SrtpSender(ours);                // our key protects what we send
 *   const receiver = new SrtpReceiver(theirs.attribute); // theirs checks what we receive
 *   socket.send(sender.protectRtp(rtpPacket));
 *   const rtp = receiver.unprotectRtp(datagram);        // decrypted in place, or an SrtpDrop
 *   if (isSrtpDrop(rtp)) drops[rtp]++;
 */
export {
  formatSdesCryptoAttribute,
  generateSdesCryptoAttribute,
  parseSdesCryptoAttribute,
} from './sdes-crypto-attribute.js';
export type {
  SdesCryptoAttribute,
  SdesCryptoErrorReason,
  SdesCryptoParseResult,
} from './sdes-crypto-attribute.js';
export { SrtpError } from './srtp-error.js';
export type { SrtpErrorCode } from './srtp-error.js';
export { deriveSessionKey, deriveSrtpKeys, SRTP_LABEL } from './srtp-keys.js';
export type { SrtpDerivedKeys, SrtpSessionKeys } from './srtp-keys.js';
export { isSrtpDrop, SrtpReceiver } from './srtp-receiver.js';
export type { SrtpDrop } from './srtp-receiver.js';
export { SrtpSender } from './srtp-sender.js';
export { isSrtpSuiteName, SRTP_SUITES } from './srtp-suite.js';
export type { SrtpKeyingMaterial, SrtpSuite, SrtpSuiteName } from './srtp-suite.js';
