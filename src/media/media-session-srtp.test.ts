import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import type { MediaError } from './media-error.js';
import type { MediaSession } from './media-session.js';
import type { SrtpMode } from './sdp-types.js';
import {
  formatSdesCryptoAttribute,
  generateSdesCryptoAttribute,
  isSrtpDrop,
  parseSdesCryptoAttribute,
  SrtpReceiver,
  SrtpSender,
  type SdesCryptoAttribute,
} from './srtp/index.js';
import { useTestEngines } from './test-support/test-engines.js';
import { sleep, until } from './test-support/wait.js';

const { engine } = useTestEngines();
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

/** Speech-like μ-law that is never the 0xff of silence. */
function speech(bytes: number, seed = 0): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (i + seed) % 200;
  return b;
}

/** A offers, B answers: a connected pair (a short RTCP interval to see SRTCP). */
async function pair(a: SrtpMode, b: SrtpMode): Promise<[MediaSession, MediaSession]> {
  const config = { rtcpIntervalMs: 200 };
  const sa = await engine(config).createSession({ srtp: a });
  const sb = await engine(config).createSession({ srtp: b });
  sa.applyAnswer(sb.answerOffer(sa.createOffer()));
  return [sa, sb];
}

/** Collects the received non-silent audio of a session. */
function heard(s: MediaSession): Buffer[] {
  const got: Buffer[] = [];
  s.onAudio((f) => {
    if (f.payload[0] !== 0xff) got.push(Buffer.from(f.payload));
  });
  return got;
}

function cryptoOf(sdp: string, tag: number): SdesCryptoAttribute {
  const line = sdp.split('\r\n').find((l) => l.startsWith(`a=crypto:${tag} `));
  const parsed = parseSdesCryptoAttribute(line!.slice('a=crypto:'.length));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.attribute;
}

/** An RTP packet: PCMU, 12-byte header, `payload`. */
function rtp(seq: number, ssrc: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(12);
  h[0] = 0x80;
  h.writeUInt16BE(seq & 0xffff, 2);
  h.writeUInt32BE((seq * 160) >>> 0, 4);
  h.writeUInt32BE(ssrc, 8);
  return Buffer.concat([h, payload]);
}

async function farEnd(): Promise<Socket> {
  const s = createSocket('udp4');
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

function answerSdp(port: number, profile: string, crypto: string[]): string {
  return [
    'v=0',
    'o=- 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} ${profile} 0 101`,
    'a=rtpmap:101 telephone-event/8000',
    ...crypto.map((c) => `a=crypto:${c}`),
    '',
  ].join('\r\n');
}

describe('MediaSession with SRTP (SDES) on loopback', () => {
  it('carries audio, DTMF and RTCP both ways over SRTP, byte for byte', async () => {
    const [a, b] = await pair('srtp', 'srtp');
    expect(a.stats().srtp?.suite).toBe('AES_CM_128_HMAC_SHA1_80'); // the answerer's first choice
    const atB = heard(b);
    const atA = heard(a);
    const toB = speech(800);
    const toA = speech(480, 7);
    expect(a.enqueue(toB)).toBe(100);
    expect(b.enqueue(toA)).toBe(60);
    await until(() => atB.length === 5 && atA.length === 3);
    await sleep(60);
    expect(Buffer.concat(atB)).toEqual(toB);
    expect(Buffer.concat(atA)).toEqual(toA);

    const digits: string[] = [];
    b.on('dtmf', (d) => digits.push(d.digit));
    a.sendDtmf('5#'); // RFC 4733 events are SRTP packets too
    await until(() => digits.length === 2);
    expect(digits).toEqual(['5', '#']);

    // SRTCP: each side authenticated the other's reports
    await until(() => a.counters().rtcpReceived > 0 && b.counters().rtcpReceived > 0);

    const [ca, cb] = await Promise.all([a.close(), b.close()]);
    for (const c of [ca, cb]) {
      const q = c.networkQuality;
      expect(q.srtp).toMatchObject({ authFailures: 0, replayed: 0 });
      expect(q.packetsLost).toBe(0);
      // every RTP packet received was an SRTP one unprotected (SRTCP on top)
      expect(q.srtp!.packetsUnprotected).toBeGreaterThan(q.packetsReceived);
      expect(c.counters.malformedPackets).toBe(0);
    }
  });

  it("'srtp-optional' offerer and a plain answerer: plain RTP, no srtp figures", async () => {
    const [a, b] = await pair('srtp-optional', 'rtp');
    expect(a.stats().srtp).toBeUndefined();
    const atB = heard(b);
    a.enqueue(speech(320));
    await until(() => atB.length === 2);
    expect(Buffer.concat(atB)).toEqual(speech(320));
    expect((await a.close()).networkQuality.srtp).toBeUndefined();
  });

  it("refuses an 'srtp' answer without usable crypto: srtp_negotiation_failed, no media", async () => {
    const a = await engine().createSession({ srtp: 'srtp' });
    a.createOffer();
    const far = await farEnd();
    const port = far.address().port;
    for (const answer of [
      answerSdp(port, 'RTP/AVP', []),
      answerSdp(port, 'RTP/SAVP', []),
      answerSdp(port, 'RTP/SAVP', [formatSdesCryptoAttribute(generateSdesCryptoAttribute(5))]),
    ]) {
      expect(() => a.applyAnswer(answer)).toThrow(
        expect.objectContaining({ code: 'srtp_negotiation_failed' }) as MediaError,
      );
    }
    expect(a.media).toBeNull();
    await sleep(60);
    expect(a.counters().packetsSent).toBe(0);
    await a.close();
  });

  it('counts a wrong-keyed far end as auth failures, keeps sending, closes cleanly', async () => {
    const a = await engine().createSession({ srtp: 'srtp' });
    const offer = a.createOffer();
    const far = await farEnd();
    const announced = generateSdesCryptoAttribute(1);
    a.applyAnswer(
      answerSdp(far.address().port, 'RTP/SAVP', [formatSdesCryptoAttribute(announced)]),
    );

    // what A sends is SRTP under its tag-1 key: the far end decrypts A's audio with it
    const fromA = new SrtpReceiver(cryptoOf(offer, 1));
    const decrypted: Buffer[] = [];
    let encryptedOnWire = 0;
    const sent = speech(320, 3);
    far.on('message', (msg: Buffer) => {
      if (msg[1]! >= 192 && msg[1]! <= 223) return; // SRTCP
      expect(msg).toHaveLength(12 + 160 + 10); // HMAC-SHA1-80 tag
      const onWire = Buffer.from(msg);
      const plain = fromA.unprotectRtp(msg);
      if (isSrtpDrop(plain)) throw new Error(`A's packet dropped: ${plain}`);
      const payload = plain.subarray(12);
      if (payload[0] !== 0xff) {
        decrypted.push(Buffer.from(payload));
        if (!onWire.subarray(12, 172).equals(payload)) encryptedOnWire++;
      }
    });
    a.enqueue(sent);
    await until(() => decrypted.length === 2);
    expect(Buffer.concat(decrypted)).toEqual(sent);
    expect(encryptedOnWire).toBe(2);

    // the far end sends under another key than it announced
    const atA = heard(a);
    const wrong = new SrtpSender(generateSdesCryptoAttribute(1));
    const aPort = a.localPort;
    for (let seq = 100; seq < 130; seq++) {
      far.send(wrong.protectRtp(rtp(seq, 0x1234, speech(160))), aPort, '127.0.0.1');
    }
    await until(() => a.stats().srtp!.authFailures === 30);
    expect(atA).toEqual([]);
    expect(a.stats().packetsReceived).toBe(0);

    // then under the right one, with two packets replayed
    const right = new SrtpSender(announced);
    const packets = [130, 131, 132].map((seq) => right.protectRtp(rtp(seq, 0x1234, speech(160))));
    for (const p of [...packets, packets[0]!, packets[1]!]) far.send(p, aPort, '127.0.0.1');
    await until(() => a.stats().srtp!.replayed === 2 && a.stats().packetsReceived === 3);
    expect(atA).toHaveLength(3);
    for (const f of atA) expect(f).toEqual(speech(160));

    const sentBefore = a.counters().packetsSent;
    await sleep(60);
    expect(a.counters().packetsSent).toBeGreaterThan(sentBefore);
    const closed = await a.close();
    expect(closed.networkQuality.srtp).toEqual({
      suite: 'AES_CM_128_HMAC_SHA1_80',
      authFailures: 30,
      replayed: 2,
      packetsUnprotected: 3,
    });
    expect(closed.networkQuality.packetsReceived).toBe(3);
  });

  it('answers a far-end SRTP offer, and re-keys its receiver when a re-offer changes the key', async () => {
    const a = await engine().createSession({ srtp: 'srtp' });
    const far = await farEnd();
    const port = far.address().port;
    const k1 = generateSdesCryptoAttribute(3, 'AES_CM_128_HMAC_SHA1_32');
    const answer1 = a.answerOffer(answerSdp(port, 'RTP/SAVP', [formatSdesCryptoAttribute(k1)]));
    expect(answer1).toMatch(/\r\nm=audio \d+ RTP\/SAVP 0 101\r\n/);
    expect(answer1).toMatch(/\r\na=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:/);
    const atA = heard(a);
    const s1 = new SrtpSender(k1);
    far.send(s1.protectRtp(rtp(1, 0x55, speech(160, 1))), a.localPort, '127.0.0.1');
    await until(() => atA.length === 1);

    const k2 = generateSdesCryptoAttribute(4, 'AES_CM_128_HMAC_SHA1_32');
    const answer2 = a.answerOffer(answerSdp(port, 'RTP/SAVP', [formatSdesCryptoAttribute(k2)]));
    // our key stays (RFC 4568 §7.1.4), under the re-offer's tag
    expect(cryptoOf(answer2, 4).masterKey).toEqual(cryptoOf(answer1, 3).masterKey);
    const s2 = new SrtpSender(k2);
    far.send(s2.protectRtp(rtp(2, 0x55, speech(160, 2))), a.localPort, '127.0.0.1');
    await until(() => atA.length === 2);
    expect(atA[1]).toEqual(speech(160, 2));
    far.send(s1.protectRtp(rtp(3, 0x55, speech(160, 3))), a.localPort, '127.0.0.1'); // old key
    await until(() => a.stats().srtp!.authFailures === 1);
    expect(atA).toHaveLength(2);
    await a.close();
  });
});
