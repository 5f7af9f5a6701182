/**
 * SRTP packet index estimation (RFC 3711 §3.3.1 and Appendix A): the 48-bit
 * index i = 2^16 * ROC + SEQ is never sent; the receiver guesses the ROC
 * from the highest index it has accepted, taking the guess (ROC - 1, ROC or
 * ROC + 1) that puts SEQ nearest to s_l.
 */
const SEQ_MODULUS = 0x10000;
const HALF = 0x8000;

/**
 * Appendix A: the index of a packet with sequence number `seq`, given the
 * highest index accepted so far (`highest`, -1 if none: the first packet has
 * ROC 0, §3.3.1). Returns -1 when the guess is ROC - 1 with ROC 0, a packet
 * from before the stream began.
 */
export function estimateSrtpIndex(highest: number, seq: number): number {
  if (highest < 0) return seq;
  const roc = Math.floor(highest / SEQ_MODULUS);
  const sl = highest % SEQ_MODULUS;
  let v = roc;
  if (sl < HALF) {
    if (seq - sl > HALF) v = roc - 1;
  } else if (sl - HALF > seq) {
    v = roc + 1;
  }
  return v < 0 ? -1 : v * SEQ_MODULUS + seq;
}

/** The ROC part of a packet index. */
export function rocOf(index: number): number {
  return Math.floor(index / SEQ_MODULUS);
}
