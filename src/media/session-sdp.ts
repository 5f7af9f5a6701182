import { randomInt } from 'node:crypto';
import { negotiateRemoteSdp, writeLocalSdp } from './sdp-negotiation.js';
import type { AudioCodecName, NegotiatedMedia } from './sdp-types.js';

/**
 * One session's side of offer/answer: our o= line (session id fixed,
 * version bumped with every SDP we write, RFC 3264 §8) and the settings
 * our offers and answers are made from.
 */
export interface SessionSdpSettings {
  address: string;
  port: number;
  codecs: readonly AudioCodecName[];
  telephoneEventPayloadType: number | null;
  ptime: number;
  offerRtcpMux: boolean;
}

export class SessionSdp {
  private readonly sessionId = String(randomInt(1, 2 ** 47));
  private version = 0;

  constructor(private readonly s: SessionSdpSettings) {}

  /** Our offer: codecs in config order, telephone-event, ptime, sendrecv. */
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
    });
  }

  /** Reads the answer to our offer. Throws MediaError. */
  readAnswer(sdp: string): NegotiatedMedia {
    return negotiateRemoteSdp(sdp, 'answer', {
      codecs: this.s.codecs,
      telephoneEvents: this.s.telephoneEventPayloadType !== null,
      rtcpMux: this.s.offerRtcpMux,
    });
  }

  /** Reads a far-end (re-)offer. Throws MediaError. */
  readOffer(sdp: string): NegotiatedMedia {
    return negotiateRemoteSdp(sdp, 'offer', {
      codecs: this.s.codecs,
      telephoneEvents: this.s.telephoneEventPayloadType !== null,
      rtcpMux: true,
    });
  }

  /** Our answer to an offer read with `readOffer`. */
  answer(n: NegotiatedMedia): string {
    const local = {
      address: this.s.address,
      port: this.s.port,
      codecs: this.s.codecs,
      telephoneEventPayloadType: n.telephoneEventPayloadType,
      ptime: this.s.ptime,
      rtcpMux: n.rtcpMux,
      direction: n.direction,
      sessionId: this.sessionId,
      sessionVersion: this.version++,
    };
    return writeLocalSdp(local, n);
  }
}
