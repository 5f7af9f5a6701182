import { createCipheriv } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AesCmKeystream } from './aes-cm-keystream.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('AES-CM keystream (RFC 3711 §4.1.1, Appendix B.2)', () => {
  // Appendix B.2: session key, salt already shifted, ROC = SEQ = SSRC = 0, so
  // the IV is the offset F0F1…FCFD0000
  const key = hex('2B7E151628AED2A6ABF7158809CF4F3C');
  const iv = hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000');

  it('gives the RFC keystream: the whole 1,044,512-byte segment (65,282 blocks)', () => {
    const segment = Buffer.alloc(1_044_512); // zeros: the ciphertext is the keystream
    new AesCmKeystream(key).xor(iv, segment, 0, segment.length);
    const block = (j: number): string => segment.subarray(j * 16, j * 16 + 16).toString('hex');
    expect(block(0x0000)).toBe('e03ead0935c95e80e166b16dd92b4eb4'); // counter …FCFD0000
    expect(block(0x0001)).toBe('d23513162b02d0f72a43a2fe4a5f97ab'); // counter …FCFD0001
    expect(block(0x0002)).toBe('41e95b3bb0a2e8dd477901e4fca894c0'); // counter …FCFD0002
    expect(block(0xfeff)).toBe('ec8cdf7398607cb0f2d21675ea9ea1e4'); // counter …FCFDFEFF
    expect(block(0xff00)).toBe('362b7c3c6773516318a077d7fc5073ae'); // counter …FCFDFF00
    expect(block(0xff01)).toBe('6a2cc3787889374fbeb4c81b17ba6c44'); // counter …FCFDFF01
  });

  it('is its own inverse, and touches only buf[start, end)', () => {
    const cm = new AesCmKeystream(key);
    const buf = Buffer.alloc(60, 0xab);
    cm.xor(iv, buf, 5, 55);
    expect(buf.subarray(0, 5)).toEqual(Buffer.alloc(5, 0xab));
    expect(buf.subarray(55)).toEqual(Buffer.alloc(5, 0xab));
    expect(buf.subarray(5, 21)).toEqual(
      Buffer.from(hex('E03EAD0935C95E80E166B16DD92B4EB4').map((b) => b ^ 0xab)),
    );
    cm.xor(iv, buf, 5, 55);
    expect(buf).toEqual(Buffer.alloc(60, 0xab));
  });

  it('matches node aes-128-ctr for any key, IV (low 16 bits zero) and length (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.uint8Array({ minLength: 14, maxLength: 14 }),
        fc.uint8Array({ maxLength: 3000 }),
        (k, iv14, data) => {
          const ivFull = Buffer.concat([iv14, Buffer.alloc(2)]);
          const ours = Buffer.from(data);
          new AesCmKeystream(k).xor(ivFull, ours, 0, ours.length);
          const node = createCipheriv('aes-128-ctr', k, ivFull).update(data);
          expect(ours).toEqual(node);
        },
      ),
      { seed: 3711, numRuns: 200 },
    );
  });
});
