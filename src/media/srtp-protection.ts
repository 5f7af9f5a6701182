/**
 * A session's SRTP (RFC 3711) once SDES has agreed keys: protects what the
 * session sends, checks and decrypts (in place) what it receives, and counts
 * what it drops. A drop never throws: the caller just forgets the datagram,
 * so dropped packets never reach the receive statistics or the audio.
 */
import type { SrtpKeys } from './sdes-negotiation.js';
import type { SrtpQuality } from './media-types.js';
import {
  isSrtpDrop,
  SrtpReceiver,
  SrtpSender,
  type SdesCryptoAttribute,
  type SrtpDrop,
  type SrtpSuiteName,
} from './srtp/index.js';

export class SrtpProtection {
  private suite: SrtpSuiteName;
  private sendKey: SdesCryptoAttribute;
  private receiveKey: SdesCryptoAttribute;
  private sender: SrtpSender;
  private receiver: SrtpReceiver;
  /** §3.3, §3.4: packets whose tag did not verify (wrong key, forged, corrupted). */
  private authFailures = 0;
  /** §3.3.2: packets already received, or older than the replay window. */
  private replayed = 0;
  /** SRTP and SRTCP packets that authenticated and were decrypted. */
  private unprotected = 0;
  /** Too short to be SRTP or SRTCP (counted with the session's malformed packets). */
  malformed = 0;

  constructor(keys: SrtpKeys) {
    this.suite = keys.suite;
    this.sendKey = keys.send;
    this.receiveKey = keys.receive;
    this.sender = new SrtpSender(keys.send);
    this.receiver = new SrtpReceiver(keys.receive);
  }

  /**
   * Keys from a later offer/answer. A key that did not change keeps its
   * state (ROC, replay window, RFC 3711 §3.3.1); a new far-end key starts a
   * fresh receiver.
   */
  rekey(keys: SrtpKeys): void {
    this.suite = keys.suite;
    if (!sameKey(keys.send, this.sendKey)) {
      this.sendKey = keys.send;
      this.sender = new SrtpSender(keys.send);
    }
    if (!sameKey(keys.receive, this.receiveKey)) {
      this.receiveKey = keys.receive;
      this.receiver = new SrtpReceiver(keys.receive);
    }
  }

  /** RFC 3711 §3.3: a new buffer to send in place of `packet`. */
  protectRtp(packet: Buffer): Buffer {
    return this.sender.protectRtp(packet);
  }

  /** RFC 3711 §3.4. */
  protectRtcp(packet: Buffer): Buffer {
    return this.sender.protectRtcp(packet);
  }

  /** The RTP packet (a view of `datagram`, decrypted in place), or null: dropped and counted. */
  unprotectRtp(datagram: Buffer): Buffer | null {
    return this.count(this.receiver.unprotectRtp(datagram));
  }

  /** The RTCP compound packet, or null: dropped and counted. */
  unprotectRtcp(datagram: Buffer): Buffer | null {
    return this.count(this.receiver.unprotectRtcp(datagram));
  }

  /** The call record's networkQuality.srtp. */
  quality(): SrtpQuality {
    return {
      suite: this.suite,
      authFailures: this.authFailures,
      replayed: this.replayed,
      packetsUnprotected: this.unprotected,
    };
  }

  private count(result: Buffer | SrtpDrop): Buffer | null {
    if (!isSrtpDrop(result)) {
      this.unprotected++;
      return result;
    }
    if (result === 'auth_failed') this.authFailures++;
    else if (result === 'malformed') this.malformed++;
    else this.replayed++; // 'replayed' and 'too_old': both refused by the replay check
    return null;
  }
}

function sameKey(a: SdesCryptoAttribute, b: SdesCryptoAttribute): boolean {
  return (
    a.suite === b.suite && a.masterKey.equals(b.masterKey) && a.masterSalt.equals(b.masterSalt)
  );
}
