/**
 * AES-128 in counter mode as SRTP uses it (RFC 3711 §4.1.1): keystream block
 * j is AES(k_e, IV + j), and the IV's low 16 bits are always zero, so j only
 * ever fills the last two bytes of the counter block.
 *
 * One AES-128-ECB cipher is keyed once per session and reused for every
 * packet: the counter blocks are written into a reused buffer and encrypted
 * in one call: 0.9 µs for a 160-byte payload, against 1.9 to 3.4 µs for a
 * fresh aes-128-ctr cipher per packet (sip-test/load/srtp-bench.ts).
 */
import { createCipheriv, type Cipher } from 'node:crypto';

const BLOCK = 16;
/** Counter blocks kept ready: enough for a 1,500-byte datagram. */
const READY_BLOCKS = 96;
/** RFC 3711 §4.1.1: at most 2^16 blocks per packet (the counter is 16 bits). */
const MAX_BYTES = 0x10000 * BLOCK;

/**
 * Counter blocks, shared by every instance (xor() is synchronous, so no two
 * packets use them at once); bytes 14–15 of block j hold j and never change.
 */
const counters = counterBlocks(READY_BLOCKS);

/** AES-CM keystream generator for one session encryption key. */
export class AesCmKeystream {
  private readonly ecb: Cipher;

  constructor(key: Uint8Array) {
    this.ecb = createCipheriv('aes-128-ecb', key, null);
    this.ecb.setAutoPadding(false); // whole blocks in, whole blocks out, no state between calls
  }

  /**
   * XORs the keystream for `iv` (16 bytes, low 16 bits zero) into
   * `buf[start, end)`: encrypts and decrypts alike.
   */
  xor(iv: Uint8Array, buf: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (length <= 0) return;
    if (length > MAX_BYTES) throw new RangeError('AES-CM: more than 2^16 blocks per packet');
    const blocks = (length + BLOCK - 1) >>> 4;
    // beyond a datagram's worth (never on the wire): a one-off set of blocks
    const blocksIn = blocks > READY_BLOCKS ? counterBlocks(blocks) : counters;
    const filled = blocks * BLOCK;
    for (let o = 0; o < filled; o += BLOCK) {
      for (let k = 0; k < 14; k++) blocksIn[o + k] = iv[k]!;
    }
    const keystream = this.ecb.update(blocksIn.subarray(0, filled));
    for (let i = 0; i < length; i++) buf[start + i] = buf[start + i]! ^ keystream[i]!;
  }
}

function counterBlocks(blocks: number): Buffer {
  const buf = Buffer.alloc(blocks * BLOCK);
  for (let j = 0; j < blocks; j++) {
    buf[j * BLOCK + 14] = j >>> 8;
    buf[j * BLOCK + 15] = j & 0xff;
  }
  return buf;
}
