// The three local pieces of the demo: SIPp as the phone, the example echo
// agent, and the daemon itself (`tsx src/main.ts`, as `npm start` runs it).
import { join } from 'node:path';
import { freePort, startProcess, tsxCli, udpPortBound, type DemoProcess } from './processes.js';

export interface FarEnd {
  proc: DemoProcess;
  host: string;
  port: number;
}

/**
 * `sipp -sn uas`: answers every INVITE (180, then 200 with SDP), echoes the
 * RTP it receives (-rtp_echo) and answers the BYE. It exits by itself after
 * `lifetimeSec` should the demo be killed without cleaning up.
 */
export async function startFarEnd(workDir: string, lifetimeSec: number): Promise<FarEnd> {
  const port = await freePort();
  const mediaPort = await freePort();
  const proc = await startProcess({
    name: 'SIPp',
    command: 'sipp',
    args: [
      '-sn',
      'uas',
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-t',
      'u1',
      '-mp',
      String(mediaPort),
      '-rtp_echo',
      '-timeout',
      `${lifetimeSec}s`,
      '-nostdin',
    ],
    cwd: workDir, // anything SIPp writes lands in the demo's temporary directory
    logFile: join(workDir, 'sipp.log'),
  }).catch((err: Error) => {
    throw new Error(
      `${err.message}. The demo's phone is SIPp: install it (Debian/Ubuntu: sudo apt-get install sip-tester).`,
    );
  });
  // Wait until its UDP socket is bound (read from /proc; elsewhere a fixed wait).
  for (let i = 0; i < 100; i++) {
    if (proc.hasExited()) throw new Error(`SIPp exited at start: ${proc.tail() || '(no output)'}`);
    const bound = udpPortBound(port);
    if (bound === undefined) {
      await sleep(1000);
      break;
    }
    if (bound) break;
    await sleep(50);
  }
  return { proc, host: '127.0.0.1', port };
}

export interface EchoAgent {
  proc: DemoProcess;
  url: string;
}

/** examples/echo-agent.ts on a free loopback port. */
export async function startEchoAgent(repoDir: string, workDir: string): Promise<EchoAgent> {
  const port = await freePort();
  const proc = await startProcess({
    name: 'echo agent',
    command: process.execPath,
    args: [tsxCli(), 'examples/echo-agent.ts', '--port', String(port)],
    cwd: repoDir,
    logFile: join(workDir, 'echo-agent.log'),
  });
  await proc.waitFor(/"msg":"echo agent listening"/, 20_000);
  return { proc, url: `ws://127.0.0.1:${port}` };
}

export interface LocalDaemon {
  proc: DemoProcess;
  baseUrl: string;
  sipPort: number;
  dbPath: string;
}

/**
 * The daemon on a fresh SQLite file in `workDir`, HTTP and SIP on free
 * loopback ports, with a bootstrap key (company "default", full access).
 */
export async function startDaemon(
  repoDir: string,
  workDir: string,
  apiKey: string,
): Promise<LocalDaemon> {
  const dbPath = join(workDir, 'gateway.sqlite');
  // The embedded defaults, whatever GATEWAY_* or DRACHTIO_* this shell has set.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(GATEWAY|DRACHTIO)_/.test(k)) env[k] = v;
  }
  const proc = await startProcess({
    name: 'daemon',
    command: process.execPath,
    args: [tsxCli(), 'src/main.ts'],
    cwd: repoDir,
    env: {
      ...env,
      GATEWAY_HTTP_PORT: '0', // any free port: read back from the "gateway listening" line
      GATEWAY_SIP_PORT: String(await freePort()),
      GATEWAY_DB_PATH: dbPath,
      GATEWAY_RECORDING_DIR: join(workDir, 'recordings'),
      GATEWAY_BOOTSTRAP_API_KEY: apiKey,
      GATEWAY_SHUTDOWN_GRACE_MS: '3000',
    },
    logFile: join(workDir, 'daemon.log'),
  });
  const line = await proc.waitFor(/^(\{.*"msg":"gateway listening".*\})\n/m, 30_000);
  const listening = JSON.parse(line[1] ?? '') as { pid: number; port: number; sipPort: number };
  // SIGTERM goes to the daemon itself (tsx runs it as its child), which drains its calls.
  proc.signalPid = listening.pid;
  return {
    proc,
    baseUrl: `http://127.0.0.1:${listening.port}`,
    sipPort: listening.sipPort,
    dbPath,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
