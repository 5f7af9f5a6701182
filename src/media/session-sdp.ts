import { randomInt } from 'node:crypto';
import { SdesNegotiation, type SrtpKeys } from './sdes-negotiation.js';
import type { SdesOfferKeys } from './sdes-offer-keys.js';
import { audioCryptoValues, negotiateRemoteSdp, writeLocalSdp } from './sdp-negotiation.js';
import type { AudioCodecName, NegotiatedMedia, SrtpMode } from './sdp-types.js';

/**
 * One session's side of offer/answer: our o= line (session id fixed,
 * version bumped with every SDP we write, RFC 3264 §8), the settings
 * our offers and answers are made from, and the SDES state (RFC 4568).
 */
export interface SessionSdpSettings {
  address: string;
  port: number;
  codecs: readonly AudioCodecName[];
  telephoneEventPayloadType: number | null;
  ptime: number;
  offerRtcpMux: boolean;
  /** Default 'rtp': no a=crypto, RTP/AVP only. */
  srtp?: SrtpMode;
  /** Our SDES keys, required with an SRTP mode. */
  sdesKeys?: SdesOfferKeys | null;
}

/** What an answer or an offer from the far end agreed. */
export interface SessionNegotiation {
  media: NegotiatedMedia;
  /** The SRTP keys; null: plain RTP. */
  srtp: SrtpKeys | null;
}

export class SessionSdp {
  private readonly sessionId = String(randomInt(1, 2 ** 47));
  private version = 0;
  private readonly sdes: SdesNegotiation;

  constructor(private readonly s: SessionSdpSettings) {
    this.sdes = new SdesNegotiation(s.srtp ?? 'rtp', s.sdesKeys ?? null);
  }

  /** Our offer: codecs in config order, telephone-event, ptime, sendrecv, a=crypto if SRTP. */
  offer(): string {
    return writeLocalSdp({
      address: this.s.address,
      port: this.s.port,
      codecs: this.s.codecs,
      telephoneEventPayloadType: this.s.telephoneEventPayloadType,
      ptime: this.s.ptime,
      rtcpMux: this.s.offerRtcpMux,
      direction: 'sendrecv',
      sessionId: this.sessionId,
      sessionVersion: this.version++,
      profile: this.sdes.offerProfile(),
      crypto: this.sdes.offerCrypto(),
    });
  }

  /** Reads the answer to our offer. Throws MediaError. */
  readAnswer(sdp: string): SessionNegotiation {
    const media = negotiateRemoteSdp(sdp, 'answer', {
      codecs: this.s.codecs,
      telephoneEvents: this.s.telephoneEventPayloadType !== null,
      rtcpMux: this.s.offerRtcpMux,
      savp: this.sdes.allowsSavp,
    });
    return { media, srtp: this.sdes.readAnswer(media.profile, this.cryptoOf(sdp)) };
  }

  /** Reads a far-end (re-)offer. Throws MediaError. */
  readOffer(sdp: string): SessionNegotiation {
    const media = negotiateRemoteSdp(sdp, 'offer', {
      codecs: this.s.codecs,
      telephoneEvents: this.s.telephoneEventPayloadType !== null,
      rtcpMux: true,
      savp: this.sdes.allowsSavp,
    });
    return { media, srtp: this.sdes.readOffer(media.profile, this.cryptoOf(sdp)) };
  }

  /** Our answer to an offer read with `readOffer` (its profile, our a=crypto if SRTP). */
  answer(n: SessionNegotiation): string {
    const local = {
      address: this.s.address,
      port: this.s.port,
      codecs: this.s.codecs,
      telephoneEventPayloadType: n.media.telephoneEventPayloadType,
      ptime: this.s.ptime,
      rtcpMux: n.media.rtcpMux,
      direction: n.media.direction,
      sessionId: this.sessionId,
      sessionVersion: this.version++,
      crypto: this.sdes.answerCrypto(n.srtp),
    };
    return writeLocalSdp(local, n.media);
  }

  private cryptoOf(sdp: string): string[] {
    return this.sdes.mode === 'rtp' ? [] : audioCryptoValues(sdp);
  }
}
