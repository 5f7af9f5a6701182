import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HmacSha1 } from './hmac-sha1.js';

const mac = (key: Uint8Array, ...parts: Uint8Array[]): string => {
  const h = new HmacSha1(key);
  for (const p of parts) h.update(p, 0, p.length);
  const out = Buffer.alloc(20);
  h.digestInto(out, 0, 20);
  return out.toString('hex');
};

describe('HMAC-SHA1 (RFC 2104)', () => {
  // RFC 2202 §3, test cases 1, 2, 3, 6
  it('gives the RFC 2202 digests', () => {
    expect(mac(Buffer.alloc(20, 0x0b), Buffer.from('Hi There'))).toBe(
      'b617318655057264e28bc0b6fb378c8ef146be00',
    );
    expect(mac(Buffer.from('Jefe'), Buffer.from('what do ya want for nothing?'))).toBe(
      'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79',
    );
    expect(mac(Buffer.alloc(20, 0xaa), Buffer.alloc(50, 0xdd))).toBe(
      '125d7342b9ac11cd91a39af48aa17b4f63f175d3',
    );
    expect(
      mac(
        Buffer.alloc(80, 0xaa),
        Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'),
      ),
    ).toBe('aa4ae5e15272d00e95705637ce8a3b55ed402112');
  });

  it('truncates to the length asked, and can be reused message after message', () => {
    const h = new HmacSha1(Buffer.from('Jefe'));
    const out = Buffer.alloc(12, 0xee);
    const msg = Buffer.from('what do ya want for nothing?');
    h.update(msg, 0, msg.length);
    h.digestInto(out, 2, 10);
    expect(out.toString('hex')).toBe('eeee' + 'effcdf6ae5eb2fa2d274');
    h.update(msg, 0, msg.length);
    h.digestInto(out, 0, 4);
    expect(out.subarray(0, 4).toString('hex')).toBe('effcdf6a');
  });

  it('matches node createHmac for any key, message and chunking (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 100 }),
        fc.uint8Array({ maxLength: 400 }),
        fc.array(fc.nat(400), { maxLength: 4 }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (key, message, cuts, roc) => {
          const h = new HmacSha1(key);
          const points = [0, ...cuts.map((c) => c % (message.length + 1)).sort((a, b) => a - b)];
          points.push(message.length);
          for (let i = 1; i < points.length; i++) h.update(message, points[i - 1]!, points[i]!);
          h.updateUint32(roc);
          const out = Buffer.alloc(20);
          h.digestInto(out, 0, 20);
          const rocBytes = Buffer.alloc(4);
          rocBytes.writeUInt32BE(roc);
          const node = createHmac('sha1', key).update(message).update(rocBytes).digest();
          expect(out).toEqual(node);
        },
      ),
      { seed: 2104, numRuns: 300 },
    );
  });
});
