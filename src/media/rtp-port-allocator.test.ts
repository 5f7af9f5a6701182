import { createSocket } from 'node:dgram';
import { describe, expect, it } from 'vitest';
import { MediaError } from './media-error.js';
import { RtpPortAllocator } from './rtp-port-allocator.js';

// A range outside the ephemeral one, private to this test file.
const BASE = 21000 + (process.pid % 200) * 10;

describe('RtpPortAllocator', () => {
  it('binds RTP on an even port and RTCP on the next, reusing released pairs', async () => {
    const alloc = new RtpPortAllocator({ min: BASE + 1, max: BASE + 5 }, '127.0.0.1');
    expect(alloc.capacity).toBe(2); // 21002/3 and 21004/5 for BASE 21000
    const a = await alloc.allocate();
    const b = await alloc.allocate();
    expect(a.port % 2).toBe(0);
    expect(a.rtcp.address().port).toBe(a.port + 1);
    expect(new Set([a.port, b.port]).size).toBe(2);
    await expect(alloc.allocate()).rejects.toMatchObject({ code: 'no_rtp_port_available' });
    a.rtp.close();
    a.rtcp.close();
    alloc.release(a.port);
    const c = await alloc.allocate();
    expect(c.port).toBe(a.port);
    for (const p of [b, c]) {
      p.rtp.close();
      p.rtcp.close();
    }
  });

  it('skips a pair whose RTCP port another socket holds', async () => {
    const squatter = createSocket('udp4');
    await new Promise<void>((r) => squatter.bind(BASE + 7, '127.0.0.1', r));
    const alloc = new RtpPortAllocator({ min: BASE + 6, max: BASE + 9 }, '127.0.0.1');
    const pair = await alloc.allocate();
    expect(pair.port).toBe(BASE + 8);
    pair.rtp.close();
    pair.rtcp.close();
    squatter.close();
  });

  it('rejects a range without a pair', () => {
    expect(() => new RtpPortAllocator({ min: 21001, max: 21001 }, '127.0.0.1')).toThrow(RangeError);
    expect(new MediaError('sdp_error', 'x').code).toBe('sdp_error');
  });
});
