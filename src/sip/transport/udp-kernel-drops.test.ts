// Issue 23 item 4: the UDP socket's buffers and the kernel's drop counter.
import { existsSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { endianness } from 'node:os';
import { describe, expect, it } from 'vitest';
import { procAddress, readUdpKernelDrops } from './udp-kernel-drops.js';
import { UdpTransport } from './udp-transport.js';

const PROC = `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
 1318: 0100007F:13C4 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 397888 2 00000000c20992e6 1234
 1319: 00000000:13C5 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 397889 2 00000000c20992e7 7
`;

describe('kernel drops from /proc/net/udp', () => {
  it.runIf(endianness() === 'LE')(
    'reads the drops column of the line with our address and port',
    () => {
      const read = () => PROC;
      expect(procAddress('127.0.0.1')).toBe('0100007F');
      expect(procAddress('::1')).toBe('00000000000000000000000001000000');
      expect(readUdpKernelDrops('127.0.0.1', 5060, read)).toBe(1234);
      expect(readUdpKernelDrops('0.0.0.0', 5061, read)).toBe(7);
      expect(readUdpKernelDrops('127.0.0.1', 5062, read)).toBeUndefined();
    },
  );

  it('is undefined where the file cannot be read or has no drops column', () => {
    expect(
      readUdpKernelDrops('127.0.0.1', 5060, () => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
    expect(readUdpKernelDrops('127.0.0.1', 5060, () => 'sl local_address\n')).toBeUndefined();
  });

  it.runIf(existsSync('/proc/net/udp'))(
    'counts what the kernel dropped for a real socket whose buffer is full',
    async () => {
      const sink = createSocket({ type: 'udp4', recvBufferSize: 4096 });
      await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
      const port = sink.address().port;
      expect(readUdpKernelDrops('127.0.0.1', port)).toBe(0);
      // Another process sends while this one is held in execFileSync: nothing drains the socket.
      const script = `const s=require('dgram').createSocket('udp4');let n=0;const b=Buffer.alloc(1000);
        const go=()=>{if(n++<200)s.send(b,${port},'127.0.0.1',go);else s.close();};go();`;
      execFileSync(process.execPath, ['-e', script]);
      expect(readUdpKernelDrops('127.0.0.1', port)).toBeGreaterThan(0);
      sink.close();
    },
  );
});

describe('UDP socket buffers', () => {
  it('asks for SO_RCVBUF/SO_SNDBUF and reports what the kernel granted', async () => {
    const t = new UdpTransport({
      host: '127.0.0.1',
      port: 0,
      onData: () => undefined,
      recvBufferSize: 256 * 1024,
      sendBufferSize: 128 * 1024,
    });
    expect(t.bufferSizes()).toBeUndefined();
    await t.listen();
    const sizes = t.bufferSizes()!;
    if (existsSync('/proc/sys/net/core/rmem_max')) {
      // Linux grants at most net.core.{r,w}mem_max and reports twice that (socket(7)).
      const max = (f: string) => Number(readFileSync(`/proc/sys/net/core/${f}`, 'utf8'));
      expect(sizes.recvBufferBytes).toBe(2 * Math.min(256 * 1024, max('rmem_max')));
      expect(sizes.sendBufferBytes).toBe(2 * Math.min(128 * 1024, max('wmem_max')));
    } else expect(sizes.recvBufferBytes).toBeGreaterThan(0);
    await t.close();
  });
});
