// The SIP engines the contract suite runs against. The embedded engine always
// runs; the drachtio engine runs when DRACHTIO_HOST points at a drachtio-server
// that accepts a TCP connection on DRACHTIO_PORT (default 9022).
import { connect } from 'node:net';

export interface Engine {
  /** The describe block's name (says why when it is not run). */
  name: string;
  /** Environment for the daemon (`npm start`). */
  env: Record<string, string>;
  /** The address SIPp binds and trunks point at: reachable from the SIP engine. */
  sippHost: string;
  run: boolean;
}

/** True when something accepts a TCP connection at host:port within timeoutMs. */
export function probeTcp(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function contractEngines(env = process.env): Promise<Engine[]> {
  const embedded: Engine = {
    name: 'embedded engine',
    env: { GATEWAY_SIP_ENGINE: 'embedded' },
    sippHost: '127.0.0.1',
    run: true,
  };
  const host = env.DRACHTIO_HOST;
  const port = Number(env.DRACHTIO_PORT ?? 9022);
  const reachable = host ? await probeTcp(host, port) : false;
  const drachtio: Engine = {
    name: reachable
      ? `drachtio engine (drachtio-server at ${host}:${port})`
      : host
        ? `drachtio engine (not run: no drachtio-server answering at DRACHTIO_HOST=${host}:${port})`
        : 'drachtio engine (not run: no drachtio-server at DRACHTIO_HOST, which is unset)',
    env: {
      GATEWAY_SIP_ENGINE: 'drachtio',
      DRACHTIO_HOST: host ?? '',
      DRACHTIO_PORT: String(port),
      DRACHTIO_SECRET: env.DRACHTIO_SECRET ?? 'cymru',
      // The OPTIONS trunk monitor belongs to the embedded stack.
      GATEWAY_SIP_OPTIONS_PING_SECONDS: '0',
    },
    // drachtio-server sends the INVITEs, so SIPp must listen where it can reach.
    sippHost: env.CONTRACT_SIPP_HOST ?? '127.0.0.1',
    run: reachable,
  };
  if (!reachable) console.warn(`[contract] ${drachtio.name}`);
  return [embedded, drachtio];
}
