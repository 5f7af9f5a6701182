import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SrtpError } from './srtp-error.js';
import { isSrtpDrop, SrtpReceiver, type SrtpDrop } from './srtp-receiver.js';
import { SrtpSender } from './srtp-sender.js';
import { SrtpSessionCrypto } from './srtp-session-crypto.js';
import type { SrtpKeyingMaterial, SrtpSuiteName } from './srtp-suite.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const SUITES: SrtpSuiteName[] = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'];

// libsrtp's srtp_validate() test key (test/srtp_driver.c): the RFC 3711 B.3
// master key and salt
const LIBSRTP_KEY = hex('e1f97a0d3e018be0d64fa32c06de4139');
const LIBSRTP_SALT = hex('0ec675ad498afeebb6960b3aabe6');
const keys = (suite: SrtpSuiteName, seed = 0): SrtpKeyingMaterial => ({
  suite,
  masterKey: Buffer.alloc(16, 0x11 + seed),
  masterSalt: Buffer.alloc(14, 0x22 + seed),
});

interface RtpOptions {
  seq: number;
  ssrc?: number;
  timestamp?: number;
  payload?: Buffer;
  csrcs?: number[];
  /** Header extension body, whole 32-bit words. */
  extension?: Buffer;
  payloadType?: number;
  marker?: boolean;
}

/** An RTP packet (RFC 3550 §5.1) with optional CSRCs and header extension. */
function rtp(o: RtpOptions): Buffer {
  const csrcs = o.csrcs ?? [];
  const ext = o.extension;
  const payload = o.payload ?? Buffer.alloc(160, 0xd5);
  const header = Buffer.alloc(12 + csrcs.length * 4 + (ext ? 4 + ext.length : 0));
  header[0] = 0x80 | (ext ? 0x10 : 0) | csrcs.length;
  header[1] = ((o.marker ?? false) ? 0x80 : 0) | (o.payloadType ?? 0);
  header.writeUInt16BE(o.seq & 0xffff, 2);
  header.writeUInt32BE((o.timestamp ?? o.seq * 160) >>> 0, 4);
  header.writeUInt32BE(o.ssrc ?? 0xdecafbad, 8);
  csrcs.forEach((c, i) => header.writeUInt32BE(c, 12 + i * 4));
  if (ext) {
    const at = 12 + csrcs.length * 4;
    header.writeUInt16BE(0xbede, at); // RFC 8285 one-byte header profile
    header.writeUInt16BE(ext.length / 4, at + 2);
    ext.copy(header, at + 4);
  }
  return Buffer.concat([header, payload]);
}

/** An RTCP receiver report with one report block (RFC 3550 §6.4.2). */
function rtcpRr(ssrc: number, fill = 0x5a): Buffer {
  const rr = Buffer.alloc(32, fill);
  rr.writeUInt8(0x81, 0); // V=2, RC=1
  rr.writeUInt8(201, 1);
  rr.writeUInt16BE(32 / 4 - 1, 2);
  rr.writeUInt32BE(ssrc, 4);
  return rr;
}

/** unprotect on a copy, so the test keeps the SRTP bytes. */
const open = (r: SrtpReceiver, p: Buffer): Buffer | SrtpDrop => r.unprotectRtp(Buffer.from(p));
const openRtcp = (r: SrtpReceiver, p: Buffer): Buffer | SrtpDrop => r.unprotectRtcp(Buffer.from(p));

describe('SRTP known answers from libsrtp (srtp_driver.c, srtp_validate)', () => {
  // RTP: V=2, PT=15, SEQ=0x1234, TS=0xdecafbad, SSRC=0xcafebabe, 16 bytes of 0xab
  const rtpPlain = hex('800f1234 decafbad cafebabe' + 'ab'.repeat(16));
  const srtp80 = hex(
    '800f1234 decafbad cafebabe' +
      '4e55dc4c e79978d8 8ca4d215 949d2402' + // payload encrypted, index 0x1234
      'b78d6acc 99ea179b 8dbb', // HMAC-SHA1-80 tag
  );
  // RTCP: SR header (length field as libsrtp has it), SSRC, 16 bytes of 0xab
  const rtcpPlain = hex('81c8000b cafebabe' + 'ab'.repeat(16));
  const srtcp = hex(
    '81c8000b cafebabe' +
      '7128035b e487b9bd bef89041 f977a5a8' + // encrypted, SRTCP index 1
      '80000001' + // E=1, SRTCP index 1
      '993e08cd 54d6c1230798', // HMAC-SHA1-80 tag
  );
  const material = (suite: SrtpSuiteName): SrtpKeyingMaterial => ({
    suite,
    masterKey: LIBSRTP_KEY,
    masterSalt: LIBSRTP_SALT,
  });

  it('protects the reference RTP packet to libsrtp bytes (AES_CM_128_HMAC_SHA1_80)', () => {
    expect(new SrtpSender(material('AES_CM_128_HMAC_SHA1_80')).protectRtp(rtpPlain)).toEqual(
      srtp80,
    );
  });

  it('unprotects libsrtp bytes to the reference RTP packet', () => {
    const r = new SrtpReceiver(material('AES_CM_128_HMAC_SHA1_80'));
    expect(open(r, srtp80)).toEqual(rtpPlain);
  });

  it('AES_CM_128_HMAC_SHA1_32: the same ciphertext, the tag cut to its first 4 bytes', () => {
    const srtp32 = srtp80.subarray(0, 12 + 16 + 4);
    expect(new SrtpSender(material('AES_CM_128_HMAC_SHA1_32')).protectRtp(rtpPlain)).toEqual(
      srtp32,
    );
    expect(open(new SrtpReceiver(material('AES_CM_128_HMAC_SHA1_32')), srtp32)).toEqual(rtpPlain);
  });

  it('SRTCP: our second packet (index 1) is libsrtp first (libsrtp starts at 1, §3.4 at 0)', () => {
    const s = new SrtpSender(material('AES_CM_128_HMAC_SHA1_80'));
    const first = s.protectRtcp(rtcpPlain);
    expect(first.readUInt32BE(first.length - 14)).toBe(0x80000000); // E=1, index 0
    expect(s.protectRtcp(rtcpPlain)).toEqual(srtcp);
  });

  it('SRTCP: unprotects libsrtp bytes to the reference RTCP packet, for both suites', () => {
    for (const suite of SUITES) {
      expect(openRtcp(new SrtpReceiver(material(suite)), srtcp)).toEqual(rtcpPlain);
    }
  });
});

describe.each(SUITES)('SRTP round trips, %s', (suite) => {
  const tagLength = suite === 'AES_CM_128_HMAC_SHA1_80' ? 10 : 4;
  const withCsrcAndExtension = (seq: number): Buffer =>
    rtp({ seq, csrcs: [0x01020304, 0x05060708], extension: hex('10ff0000 22aabbcc') });

  it('RTP with CSRCs and an extension: header in the clear, payload encrypted, tag added', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const plain = withCsrcAndExtension(1000);
    const headerLength = 12 + 8 + 12;
    const protectedPacket = s.protectRtp(plain);
    expect(protectedPacket).toHaveLength(plain.length + tagLength);
    expect(protectedPacket.subarray(0, headerLength)).toEqual(plain.subarray(0, headerLength));
    expect(protectedPacket.subarray(headerLength, plain.length)).not.toEqual(
      plain.subarray(headerLength),
    );
    expect(open(r, protectedPacket)).toEqual(plain);
  });

  it('RTCP: 8 bytes in the clear, the rest encrypted, E flag and a counting SRTCP index', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    for (let i = 0; i < 3; i++) {
      const plain = rtcpRr(0x11223344, i);
      const p = s.protectRtcp(plain);
      expect(p).toHaveLength(plain.length + 4 + 10); // SRTCP tag: 10 bytes for both suites
      expect(p.subarray(0, 8)).toEqual(plain.subarray(0, 8));
      expect(p.subarray(8, plain.length)).not.toEqual(plain.subarray(8));
      expect(p.readUInt32BE(plain.length)).toBe((0x80000000 | i) >>> 0);
      expect(openRtcp(r, p)).toEqual(plain);
    }
  });

  it('unprotects in place: the result is a view of the packet it was given', () => {
    const r = new SrtpReceiver(keys(suite));
    const p = new SrtpSender(keys(suite)).protectRtp(rtp({ seq: 1 }));
    const out = r.unprotectRtp(p);
    expect(isSrtpDrop(out)).toBe(false);
    expect((out as Buffer).buffer).toBe(p.buffer);
  });

  it('a tampered byte anywhere (header, extension, payload, tag) is auth_failed', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const p = s.protectRtp(withCsrcAndExtension(7));
    for (const at of [1, 5, 9, 14, 25, 40, p.length - 1]) {
      const bad = Buffer.from(p);
      bad[at]! ^= 0x01;
      expect(open(r, bad)).toBe('auth_failed');
    }
    expect(open(r, p)).toEqual(withCsrcAndExtension(7)); // the receiver was not disturbed
  });

  it('a tampered SRTCP byte, E flag or index is auth_failed', () => {
    const r = new SrtpReceiver(keys(suite));
    const plain = rtcpRr(0x99);
    const p = new SrtpSender(keys(suite)).protectRtcp(plain);
    for (const at of [0, 4, 10, plain.length, plain.length + 3, p.length - 1]) {
      const bad = Buffer.from(p);
      bad[at]! ^= at === 0 ? 0x01 : 0x80;
      expect(openRtcp(r, bad)).toBe('auth_failed');
    }
    expect(openRtcp(r, p)).toEqual(plain);
  });

  it('a replayed packet is replayed, RTP and RTCP', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const p = s.protectRtp(rtp({ seq: 500 }));
    expect(isSrtpDrop(open(r, p))).toBe(false);
    expect(open(r, p)).toBe('replayed');
    expect(isSrtpDrop(open(r, s.protectRtp(rtp({ seq: 501 }))))).toBe(false);
    expect(open(r, p)).toBe('replayed');
    const c = s.protectRtcp(rtcpRr(0xdecafbad));
    expect(isSrtpDrop(openRtcp(r, c))).toBe(false);
    expect(openRtcp(r, c)).toBe('replayed');
  });

  it('accepts out-of-order packets in the window, drops those 64 or more behind: too_old', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const sent = Array.from({ length: 100 }, (_, i) => s.protectRtp(rtp({ seq: 2000 + i })));
    expect(open(r, sent[10]!)).toEqual(rtp({ seq: 2010 }));
    for (const i of [5, 9, 6, 7, 8]) expect(open(r, sent[i]!)).toEqual(rtp({ seq: 2000 + i }));
    expect(open(r, sent[99]!)).toEqual(rtp({ seq: 2099 }));
    expect(open(r, sent[36]!)).toEqual(rtp({ seq: 2036 })); // 63 behind 2099
    expect(open(r, sent[35]!)).toBe('too_old'); // 64 behind
    expect(open(r, sent[20]!)).toBe('too_old');
  });

  it('SEQ wrap 65535 → 0 increments the ROC on both sides', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const ssrc = 0xdecafbad;
    for (let i = 0; i < 12; i++) {
      const seq = (65530 + i) & 0xffff;
      expect(open(r, s.protectRtp(rtp({ seq })))).toEqual(rtp({ seq }));
    }
    expect(s.rolloverCounter(ssrc)).toBe(1);
    expect(r.rolloverCounter(ssrc)).toBe(1);
    // the sender really used ROC 1: a receiver that saw nothing assumes ROC 0
    expect(open(new SrtpReceiver(keys(suite)), s.protectRtp(rtp({ seq: 6 })))).toBe('auth_failed');
  });

  it('a late packet from before the wrap is decrypted with the previous ROC', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const [a, b, c, d] = [65534, 65535, 0, 1].map((seq) => s.protectRtp(rtp({ seq })));
    expect(open(r, a!)).toEqual(rtp({ seq: 65534 }));
    expect(open(r, c!)).toEqual(rtp({ seq: 0 })); // ROC 1
    expect(open(r, b!)).toEqual(rtp({ seq: 65535 })); // ROC 0, Appendix A's ROC - 1
    expect(open(r, d!)).toEqual(rtp({ seq: 1 }));
    expect(r.rolloverCounter(0xdecafbad)).toBe(1);
  });

  it('70,000 packets in a row: every one decrypts, the ROC ends at 1 on both sides', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    const payload = Buffer.alloc(160);
    let bad = 0;
    for (let i = 0; i < 70_000; i++) {
      payload.writeUInt32BE(i, 0);
      const plain = rtp({ seq: i & 0xffff, payload });
      const out = r.unprotectRtp(s.protectRtp(plain));
      if (isSrtpDrop(out) || !out.equals(plain)) bad++;
    }
    expect(bad).toBe(0);
    expect(s.rolloverCounter(0xdecafbad)).toBe(1);
    expect(r.rolloverCounter(0xdecafbad)).toBe(1);
  });

  it('a wrong key: auth_failed on every packet, and the receiver state is untouched', () => {
    const right = new SrtpSender(keys(suite));
    const wrong = new SrtpSender(keys(suite, 1));
    const r = new SrtpReceiver(keys(suite));
    // wrong-keyed packets far ahead (and, for a new SSRC, before any right one)
    for (let i = 0; i < 50; i++) {
      expect(open(r, wrong.protectRtp(rtp({ seq: 30000 + i })))).toBe('auth_failed');
      expect(openRtcp(r, wrong.protectRtcp(rtcpRr(0xdecafbad)))).toBe('auth_failed');
    }
    expect(r.rolloverCounter(0xdecafbad)).toBeUndefined();
    expect(open(r, right.protectRtp(rtp({ seq: 100 })))).toEqual(rtp({ seq: 100 }));
    for (let i = 0; i < 50; i++) {
      expect(open(r, wrong.protectRtp(rtp({ seq: 30100 + i })))).toBe('auth_failed');
    }
    // had a forgery moved s_l to 30100+, seq 101 would now be too_old
    expect(open(r, right.protectRtp(rtp({ seq: 101 })))).toEqual(rtp({ seq: 101 }));
    expect(r.rolloverCounter(0xdecafbad)).toBe(0);
    expect(openRtcp(r, right.protectRtcp(rtcpRr(0xdecafbad)))).toEqual(rtcpRr(0xdecafbad));
  });

  it('keeps state per SSRC: two sources with the same sequence numbers', () => {
    const s = new SrtpSender(keys(suite));
    const r = new SrtpReceiver(keys(suite));
    for (let seq = 65534; seq < 65540; seq++) {
      for (const ssrc of [1, 2]) {
        const plain = rtp({ seq: seq & 0xffff, ssrc });
        expect(open(r, s.protectRtp(plain))).toEqual(plain);
      }
    }
    expect(r.rolloverCounter(1)).toBe(1);
    expect(r.rolloverCounter(2)).toBe(1);
    expect(r.rolloverCounter(3)).toBeUndefined();
  });

  it('drops what is not SRTP as malformed, and the sender throws on what is not RTP', () => {
    const r = new SrtpReceiver(keys(suite));
    expect(open(r, Buffer.alloc(0))).toBe('malformed');
    expect(open(r, Buffer.alloc(12 + tagLength - 1, 0x80))).toBe('malformed'); // too short
    const good = new SrtpSender(keys(suite)).protectRtp(rtp({ seq: 1 }));
    const v1 = Buffer.from(good);
    v1[0] = 0x40; // version 1
    expect(open(r, v1)).toBe('malformed');
    const short = rtp({ seq: 2, payload: Buffer.alloc(20) });
    short[0] = 0x8f; // 15 CSRCs: a 72-byte header, more than the packet holds
    expect(open(r, short)).toBe('malformed');
    const csrcChanged = Buffer.from(good);
    csrcChanged[0] = 0x8f; // 72 bytes fit in this one: the tag catches the change
    expect(open(r, csrcChanged)).toBe('auth_failed');
    const extOverrun = rtp({ seq: 3, extension: Buffer.alloc(4), payload: Buffer.alloc(0) });
    extOverrun.writeUInt16BE(200, 14); // extension length 200 words
    expect(open(r, Buffer.concat([extOverrun, Buffer.alloc(tagLength)]))).toBe('malformed');
    expect(openRtcp(r, Buffer.alloc(21, 0x80))).toBe('malformed'); // < 8 + 4 + 10
    expect(openRtcp(r, Buffer.alloc(40, 0x00))).toBe('malformed'); // version 0
    const s = new SrtpSender(keys(suite));
    expect(() => s.protectRtp(Buffer.alloc(11, 0x80))).toThrow(SrtpError);
    expect(() => s.protectRtcp(Buffer.alloc(8))).toThrow(/not an RTCP packet/);
  });

  it('SRTCP with E = 0 is authenticated and returned as sent', () => {
    const crypto = new SrtpSessionCrypto(keys(suite));
    const plain = rtcpRr(0x77);
    const p = Buffer.alloc(plain.length + 4 + 10);
    plain.copy(p);
    p.writeUInt32BE(5, plain.length); // E = 0, index 5
    crypto.writeRtcpTag(p, plain.length + 4, p, plain.length + 4);
    expect(openRtcp(new SrtpReceiver(keys(suite)), p)).toEqual(plain);
  });

  it('unprotect(protect(p)) = p for any payload, seq, ts, SSRC, CSRCs, extension (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 15 }),
        fc.option(fc.uint8Array({ maxLength: 3 }).map((w) => Buffer.alloc(w.length * 4, 0x42))),
        fc.integer({ min: 0, max: 127 }),
        fc.boolean(),
        (payload, seq, timestamp, ssrc, csrcs, extension, payloadType, marker) => {
          const s = new SrtpSender(keys(suite));
          const r = new SrtpReceiver(keys(suite));
          const plain = rtp({
            seq,
            timestamp,
            ssrc,
            csrcs,
            payload: Buffer.from(payload),
            payloadType,
            marker,
            ...(extension === null ? {} : { extension }),
          });
          const p = s.protectRtp(plain);
          expect(open(r, p)).toEqual(plain);
          expect(open(r, p)).toBe('replayed');
          const rtcp = Buffer.concat([rtcpRr(ssrc), Buffer.from(payload)]);
          expect(openRtcp(r, s.protectRtcp(rtcp))).toEqual(rtcp);
        },
      ),
      { seed: 4568, numRuns: 300 },
    );
  });
});
