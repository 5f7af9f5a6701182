// The real drachtio-srf under our connection loop, against a loopback stand-in
// for drachtio-server that speaks only the first step of its wire protocol
// (`<len>#<msgId>|authenticate|<secret>|<tags>` → `…|response|<msgId>|OK|<hostport>`).
// It checks what the fakes cannot: event names, the secret check, that
// drachtio-srf's own reconnect stays off, and that stop() ends the retries.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DrachtioSignaling } from './drachtio-signaling.js';

interface Stub {
  server: Server;
  port: number;
  sockets: Set<Socket>;
  accepted: number;
  authAttempts: string[];
}

function frame(body: string): string {
  return `${Buffer.byteLength(body)}#${body}`;
}

async function stubServer(secret: string): Promise<Stub> {
  const stub = { sockets: new Set<Socket>(), accepted: 0, authAttempts: [] as string[] } as Stub;
  stub.server = createServer((socket) => {
    stub.accepted++;
    stub.sockets.add(socket);
    socket.on('close', () => stub.sockets.delete(socket));
    socket.on('error', () => undefined);
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString();
      for (let hash = buf.indexOf('#'); hash > 0; hash = buf.indexOf('#')) {
        const len = Number(buf.slice(0, hash));
        if (buf.length < hash + 1 + len) return;
        const msg = buf.slice(hash + 1, hash + 1 + len);
        buf = buf.slice(hash + 1 + len);
        const [msgId, verb, given] = msg.split('|');
        if (verb !== 'authenticate') continue;
        stub.authAttempts.push(given ?? '');
        const result = given === secret ? 'OK|udp/127.0.0.1:5060|v0.8.0' : 'NOK';
        socket.write(frame(`${randomUUID()}|response|${msgId}|${result}`));
      }
    });
  });
  await new Promise<void>((r) => stub.server.listen(0, '127.0.0.1', r));
  const addr = stub.server.address();
  stub.port = typeof addr === 'object' && addr ? addr.port : 0;
  return stub;
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function engine(port: number, secret: string): DrachtioSignaling {
  const sig = new DrachtioSignaling(
    { host: '127.0.0.1', port, secret },
    { reconnect: { initialMs: 50, maxMs: 200, factor: 2 } },
  );
  cleanups.push(() => sig.stop());
  return sig;
}

function track(stub: Stub): void {
  cleanups.push(async () => {
    for (const s of stub.sockets) s.destroy();
    await new Promise<void>((r) => stub.server.close(() => r()));
  });
}

describe('drachtio-srf handshake through DrachtioSignaling (loopback stand-in server)', () => {
  it('authenticates, reports the server hostport, and comes back after the server drops it', async () => {
    const stub = await stubServer('cymru');
    track(stub);
    const sig = engine(stub.port, 'cymru');
    await sig.connect();
    expect(sig.isConnected()).toBe(true);
    expect(sig.serverHostport).toBe('udp/127.0.0.1:5060');
    for (const s of stub.sockets) s.destroy();
    await until(() => !sig.isConnected());
    await until(() => sig.isConnected());
    // Our loop alone reconnected: exactly one new connection, not two.
    expect(stub.accepted).toBe(2);
  });

  it('a wrong secret rejects connect() with auth_failed', async () => {
    const stub = await stubServer('cymru');
    track(stub);
    const sig = engine(stub.port, 'wrong');
    await expect(sig.connect()).rejects.toMatchObject({ code: 'auth_failed' });
    expect(sig.isConnected()).toBe(false);
    expect(stub.authAttempts[0]).toBe('wrong');
  });

  it('nothing listening: retries with back-off; stop() ends them', async () => {
    const stub = await stubServer('cymru');
    const port = stub.port;
    await new Promise<void>((r) => stub.server.close(() => r()));
    const sig = engine(port, 'cymru');
    const gaps: number[] = [];
    sig.on('disconnected', (e) => gaps.push(e.retryInMs));
    const pending = sig.connect().catch((err: unknown) => err);
    await until(() => gaps.length >= 3);
    expect(gaps.slice(0, 3)).toEqual([50, 100, 200]);
    await sig.stop();
    expect(await pending).toMatchObject({ code: 'stopped' });
    const seen = gaps.length;
    await new Promise((r) => setTimeout(r, 400));
    expect(gaps.length).toBe(seen);
  });
});
