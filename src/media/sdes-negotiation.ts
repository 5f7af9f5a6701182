/**
 * SDP Security Descriptions (RFC 4568) for one session's audio stream: the
 * m-line protocol and `a=crypto` lines we offer, and the SRTP keys an answer
 * or a far-end offer leaves us with. Pure: no I/O; a refusal throws
 * MediaError 'srtp_negotiation_failed' and changes nothing.
 *
 * RFC 4568: each side's a=crypto carries the key that side SENDS with, so
 * we protect with our key of the accepted tag and check with theirs.
 *
 * Offers and answers from the far end (re-INVITE, UPDATE), kept simple:
 * - once SRTP runs, its suite stays: the offer must carry an a=crypto of that
 *   suite (the first such is taken), we answer with the same key of ours under
 *   the offer's tag, and a new far-end key re-keys only our receiver; an offer
 *   without one is refused (no downgrade to plain RTP, no change of suite);
 * - before SRTP runs, the first usable a=crypto of the offer is taken (§5.1.2:
 *   lines we cannot use are ignored); none: plain RTP, unless the mode is
 *   'srtp' or the offer is RTP/SAVP, which is refused;
 * - mode 'rtp' ignores a=crypto altogether (and RTP/SAVP stays an sdp_error).
 */
import { MediaError } from './media-error.js';
import type { SdesOfferKeys } from './sdes-offer-keys.js';
import type { MediaProfile, SrtpMode } from './sdp-types.js';
import {
  formatSdesCryptoAttribute,
  parseSdesCryptoAttribute,
  type SdesCryptoAttribute,
  type SrtpSuiteName,
} from './srtp/index.js';

/** The keys a session protects and checks its media with. */
export interface SrtpKeys {
  suite: SrtpSuiteName;
  /** The tag of the accepted a=crypto (§5.1.2: the answer echoes the offer's). */
  tag: number;
  /** Ours: protects what we send. */
  send: SdesCryptoAttribute;
  /** The far end's: checks what we receive. */
  receive: SdesCryptoAttribute;
}

export class SdesNegotiation {
  private current: SrtpKeys | null = null;

  /** `ours` is required for the two SRTP modes (generateSdesOfferKeys). */
  constructor(
    readonly mode: SrtpMode,
    private readonly ours: SdesOfferKeys | null,
  ) {
    if (mode !== 'rtp' && (ours === null || ours.length === 0)) {
      throw new Error(`SRTP mode ${mode} needs our SDES keys`);
    }
  }

  /** Whether RTP/SAVP is acceptable from the far end. */
  get allowsSavp(): boolean {
    return this.mode !== 'rtp';
  }

  /** The keys in force; null: plain RTP (or nothing agreed yet). */
  get keys(): SrtpKeys | null {
    return this.current;
  }

  /** RFC 4568 §3.1.1: 'srtp' offers RTP/SAVP; the others RTP/AVP (best effort with a=crypto). */
  offerProfile(): MediaProfile {
    return this.mode === 'srtp' ? 'RTP/SAVP' : 'RTP/AVP';
  }

  /** §5.1.1: one a=crypto per key of ours, preferred first; none for 'rtp'. */
  offerCrypto(): string[] {
    return this.mode === 'rtp' ? [] : this.ourKeys().map((k) => formatSdesCryptoAttribute(k));
  }

  /**
   * §5.1.3: the answer to our offer. 'srtp' needs RTP/SAVP with exactly one
   * a=crypto whose tag is one of ours and whose suite is that tag's;
   * 'srtp-optional' takes the same, or a plain RTP/AVP answer without crypto.
   */
  readAnswer(profile: MediaProfile, crypto: readonly string[]): SrtpKeys | null {
    if (this.mode === 'rtp') return null;
    if (crypto.length === 0) {
      if (this.mode === 'srtp') refuse('the answer has no a=crypto');
      if (profile === 'RTP/SAVP') refuse('the RTP/SAVP answer has no a=crypto');
      if (this.current) refuse('the answer drops SRTP'); // no downgrade mid-call
      return this.commit(null);
    }
    if (this.mode === 'srtp' && profile !== 'RTP/SAVP') refuse(`the answer is ${profile}`);
    // §5.1.2: the answerer selects exactly one of the offered attributes
    if (crypto.length > 1) refuse('the answer has more than one a=crypto');
    const theirs = parseSdesCryptoAttribute(crypto[0]!);
    if (!theirs.ok) refuse(`the answer's a=crypto is unusable (${theirs.reason})`);
    const ours = this.ourKeys().find((k) => k.tag === theirs.attribute.tag);
    if (!ours) refuse(`the answer's a=crypto tag ${theirs.attribute.tag} was not offered`);
    if (ours.suite !== theirs.attribute.suite) refuse(`the answer's suite is not the tag's`);
    if (this.current && this.current.suite !== ours.suite) refuse('the answer changes the suite');
    return this.commit({ suite: ours.suite, tag: ours.tag, send: ours, receive: theirs.attribute });
  }

  /** §5.1.2, §7.1.4: a far-end offer (see the module comment). */
  readOffer(profile: MediaProfile, crypto: readonly string[]): SrtpKeys | null {
    if (this.mode === 'rtp') return null;
    const suite = this.current?.suite;
    for (const value of crypto) {
      const theirs = parseSdesCryptoAttribute(value);
      if (!theirs.ok || (suite !== undefined && theirs.attribute.suite !== suite)) continue;
      const ours = this.ourKeys().find((k) => k.suite === theirs.attribute.suite);
      if (!ours) continue;
      const { tag, suite: chosen } = theirs.attribute;
      return this.commit({ suite: chosen, tag, send: ours, receive: theirs.attribute });
    }
    if (suite !== undefined) refuse(`the offer has no usable a=crypto of ${suite}`);
    if (this.mode === 'srtp' || profile === 'RTP/SAVP') {
      refuse('the offer has no usable a=crypto');
    }
    return this.commit(null);
  }

  /** §5.1.2: our answer's a=crypto: our key of the agreed suite under the offer's tag. */
  answerCrypto(keys: SrtpKeys | null): string[] {
    return keys ? [formatSdesCryptoAttribute({ ...keys.send, tag: keys.tag })] : [];
  }

  private commit(keys: SrtpKeys | null): SrtpKeys | null {
    this.current = keys;
    return keys;
  }

  private ourKeys(): SdesOfferKeys {
    return this.ours ?? [];
  }
}

function refuse(message: string): never {
  throw new MediaError('srtp_negotiation_failed', message);
}
