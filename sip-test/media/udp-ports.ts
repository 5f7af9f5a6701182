import { createSocket } from 'node:dgram';

/** True when a UDP port on 127.0.0.1 can be bound right now. */
function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.once('error', () => {
      s.close();
      resolve(false);
    });
    s.bind({ port, address: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * A port in 20000–29999 (outside the ephemeral range) that is free with
 * the `extra` offsets above it (SIPp's echo binds media port and +2).
 */
export async function freeUdpPort(extra: number[] = []): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + 2 * Math.floor(Math.random() * 4_990);
    const checks = await Promise.all([port, ...extra.map((e) => port + e)].map(udpFree));
    if (checks.every(Boolean)) return port;
  }
  throw new Error('no free UDP port found');
}
