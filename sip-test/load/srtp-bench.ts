// Micro-benchmark of SRTP (src/media/srtp): what protecting an outgoing and
// unprotecting an incoming 20 ms PCMU packet (12-byte header + 160-byte
// payload = 172 bytes) costs, for both SDES suites, against a plain copy of
// the packet as the floor. Also the two design choices measured on their own:
// the AES-CM keystream (one reused AES-ECB cipher vs a fresh aes-128-ctr
// cipher per packet) and HMAC-SHA1 (keyed once in JS vs createHmac() per
// packet). Prints JSON: µs per packet, the median of several rounds, and the
// share of one core that 400 calls (50 packets/s each way) would take.
//   npx tsx sip-test/load/srtp-bench.ts
import { createCipheriv, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { AesCmKeystream } from '../../src/media/srtp/aes-cm-keystream.js';
import { HmacSha1 } from '../../src/media/srtp/hmac-sha1.js';
import { SrtpReceiver } from '../../src/media/srtp/srtp-receiver.js';
import { SrtpSender } from '../../src/media/srtp/srtp-sender.js';
import type { SrtpKeyingMaterial, SrtpSuiteName } from '../../src/media/srtp/srtp-suite.js';

const ROUNDS = 7;
const PER_ROUND = Number(process.env.PER_ROUND ?? 20_000);
const PAYLOAD_BYTES = 160; // 20 ms of PCMU
const CALLS = 400;
const PACKETS_PER_SECOND = 50; // per call, each way

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** µs per call of `fn(i)`, median of ROUNDS rounds of PER_ROUND calls; `prepare` runs untimed. */
function measure(fn: (i: number) => unknown, prepare?: () => void): number {
  prepare?.();
  for (let i = 0; i < PER_ROUND; i++) fn(i); // warm-up
  const perCall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    prepare?.();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) fn(i);
    perCall.push(Number(process.hrtime.bigint() - t0) / 1000 / PER_ROUND);
  }
  return round3(median(perCall));
}

function pcmuPacket(): Buffer {
  const packet = Buffer.alloc(12 + PAYLOAD_BYTES, 0xd5);
  packet[0] = 0x80; // V=2, PT=0 (PCMU)
  packet[1] = 0x00;
  packet.writeUInt32BE(0x1234abcd, 8);
  return packet;
}

let seq = 0;
const setSeq = (packet: Buffer): void => {
  seq = (seq + 1) & 0xffff;
  packet[2] = seq >>> 8;
  packet[3] = seq & 0xff;
};

const plain = pcmuPacket();
const copyUs = measure(() => {
  setSeq(plain);
  const out = Buffer.allocUnsafe(plain.length);
  plain.copy(out);
  return out;
});

const suites: Record<string, { protectUs: number; unprotectUs: number; drops: number }> = {};
for (const suite of ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as SrtpSuiteName[]) {
  const material: SrtpKeyingMaterial = {
    suite,
    masterKey: randomBytes(16),
    masterSalt: randomBytes(14),
  };
  const sender = new SrtpSender(material);
  const protectUs = measure(() => {
    setSeq(plain);
    return sender.protectRtp(plain);
  });
  // unprotect decrypts in place and refuses replays: each round gets new packets
  const feed = new SrtpSender(material);
  const receiver = new SrtpReceiver(material);
  let packets: Buffer[] = [];
  let drops = 0;
  const unprotectUs = measure(
    (i) => {
      if (typeof receiver.unprotectRtp(packets[i]!) === 'string') drops++;
    },
    () => {
      packets = Array.from({ length: PER_ROUND }, () => {
        setSeq(plain);
        return feed.protectRtp(plain);
      });
    },
  );
  suites[suite] = { protectUs, unprotectUs, drops };
}

// The design choices on their own, for a 160-byte payload and a 176-byte MAC input
const key = randomBytes(16);
const iv = Buffer.concat([randomBytes(14), Buffer.alloc(2)]);
const payload = randomBytes(PAYLOAD_BYTES);
const cm = new AesCmKeystream(key);
const keystreamEcbReusedUs = measure(() => cm.xor(iv, payload, 0, payload.length));
const keystreamCtrPerPacketUs = measure(() =>
  createCipheriv('aes-128-ctr', key, iv).update(payload),
);
const authKey = randomBytes(20);
const macInput = randomBytes(176);
const tag = Buffer.alloc(10);
const hmac = new HmacSha1(authKey);
const hmacKeyedOnceUs = measure(() => {
  hmac.update(macInput, 0, macInput.length);
  hmac.digestInto(tag, 0, 10);
});
const authKeyObject = createSecretKey(authKey);
const hmacCreateHmacUs = measure(() => createHmac('sha1', authKeyObject).update(macInput).digest());

const packetsPerSecond = CALLS * PACKETS_PER_SECOND;
console.log(
  JSON.stringify(
    {
      node: process.version,
      rounds: ROUNDS,
      perRound: PER_ROUND,
      statistic: 'median µs per packet',
      packetBytes: plain.length,
      baseline: { copyUs },
      suites: Object.fromEntries(
        Object.entries(suites).map(([name, s]) => [
          name,
          {
            ...s,
            // both directions of CALLS calls, in % of one core
            coreSharePercentAt400Calls: round3(
              (packetsPerSecond * (s.protectUs + s.unprotectUs)) / 1e4,
            ),
          },
        ]),
      ),
      components: {
        keystreamEcbReusedUs,
        keystreamCtrPerPacketUs,
        hmacKeyedOnceUs,
        hmacCreateHmacUs,
      },
    },
    null,
    2,
  ),
);
