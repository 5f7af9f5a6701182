// Kamailio as a test peer on 127.0.0.1: a TLS edge in front of a SIPp far
// end, a registrar with digest auth, and the carrier proxy that relays the
// gateway's INVITEs (see kamailio-config.ts for the script). Foreground
// (-DD -E), its own temp dir for config, pid file, runtime dir and ctl
// socket; nothing under /etc or /var/run, no database. Test fixture only.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  kamailioConfig,
  REQUEST_LOG_MARK,
  tlsConfig,
  type KamailioConfigOptions,
  type KamailioPorts,
} from './kamailio-config.js';
import { allocatePorts, isListening, sleep, startPeerProcess } from './peer-process.js';

export type { KamailioUser, KamailioTlsOptions } from './kamailio-config.js';

const exec = promisify(execFile);
const KAMAILIO = '/usr/sbin/kamailio';
const KAMCMD = '/usr/sbin/kamcmd';

export interface KamailioOptions extends KamailioConfigOptions {
  /** Also listen on tcp:127.0.0.1:<tcpPort>. Default false. */
  tcp?: boolean;
  /** How long start-up may take before it fails with Kamailio's output. Default 10000. */
  startTimeoutMs?: number;
}

/** One request as Kamailio logged it on arrival (before any auth or routing). */
export interface KamailioRequest {
  method: string;
  requestUri: string;
  fromUser: string | undefined;
  toUser: string | undefined;
  /** Username of the Authorization/Proxy-Authorization header; undefined without credentials. */
  authUser: string | undefined;
  /** The Expires header, when present. */
  expires: number | undefined;
  /** The Contact header as received, when present. */
  contact: string | undefined;
  transport: string;
  /** Source 'ip:port'. */
  source: string;
  callId: string;
}

/** A binding in the location table. */
export interface KamailioLocation {
  aor: string;
  /** The registered Contact URI. */
  contact: string;
  /** Seconds until it expires. */
  expires: number;
  /** Where calls to it go (fix_nated_register: the REGISTER's source), e.g. 'sip:127.0.0.1:5080;transport=tls'. */
  received: string | undefined;
  callId: string;
  userAgent: string | undefined;
  /** Kamailio's socket it came in on, e.g. 'tls:127.0.0.1:40123'. */
  socket: string;
}

export interface Kamailio {
  host: '127.0.0.1';
  udpPort: number;
  tcpPort: number | undefined;
  tlsPort: number | undefined;
  /** The main Kamailio process (it forks its workers into the same process group). */
  pid: number;
  dir: string;
  /** Kamailio's stderr log so far. */
  output(): string;
  /** Requests received so far, in order; only `method`'s when given. */
  requests(method?: string): KamailioRequest[];
  /** REGISTER requests received (challenged ones included); only `username`'s (To user) when given. */
  registerCount(username?: string): number;
  /** Resolves with the first request (past or future) that matches; rejects after timeoutMs. */
  waitForRequest(
    match: (r: KamailioRequest) => boolean,
    timeoutMs?: number,
  ): Promise<KamailioRequest>;
  /** Current bindings (ul.dump over the ctl socket); only `aor`'s when given. */
  locations(aor?: string): Promise<KamailioLocation[]>;
  /** Runs a kamcmd RPC command against this instance and returns its output. */
  rpc(command: string, ...args: string[]): Promise<string>;
  /** SIGTERM (SIGKILL after 3 s), then removes the temp dir. */
  stop(): Promise<void>;
}

const nullable = (v: string | undefined): string | undefined =>
  v === undefined || v === '<null>' ? undefined : v;

/** Parses the lines the script's xlog writes (see REQUEST_LOG_MARK). */
export function parseRequestLog(output: string): KamailioRequest[] {
  const out: KamailioRequest[] = [];
  for (const line of output.split('\n')) {
    const at = line.indexOf(REQUEST_LOG_MARK);
    if (at < 0) continue;
    const f = new Map<string, string>();
    for (const part of line.slice(at + REQUEST_LOG_MARK.length).split('|')) {
      const eq = part.indexOf('=');
      if (eq > 0) f.set(part.slice(0, eq), part.slice(eq + 1).trim());
    }
    const expires = nullable(f.get('exp'));
    out.push({
      method: f.get('rm') ?? '',
      requestUri: f.get('ru') ?? '',
      fromUser: nullable(f.get('fU')),
      toUser: nullable(f.get('tU')),
      authUser: nullable(f.get('au')),
      expires: expires === undefined ? undefined : Number(expires),
      contact: nullable(f.get('ct')),
      transport: f.get('proto') ?? '',
      source: f.get('src') ?? '',
      callId: f.get('ci') ?? '',
    });
  }
  return out;
}

/** Parses kamcmd's text rendering of ul.dump. Expired or deleted bindings are left out. */
export function parseUlDump(text: string): KamailioLocation[] {
  const out: KamailioLocation[] = [];
  for (const chunk of text.split(/\n\s*AoR: /).slice(1)) {
    const aor = chunk.slice(0, chunk.indexOf('\n')).trim();
    for (const m of chunk.matchAll(/Contact: \{([^}]*)\}/g)) {
      const f = new Map<string, string>();
      for (const line of m[1]!.split('\n')) {
        const kv = /^\s*([\w-]+): (.*)$/.exec(line);
        if (kv) f.set(kv[1]!, kv[2]!.trim());
      }
      const expires = Number(f.get('Expires'));
      if (!Number.isFinite(expires)) continue;
      const notSet = (v: string | undefined) => (v === '[not set]' ? undefined : v);
      out.push({
        aor,
        contact: f.get('Address') ?? '',
        expires,
        received: notSet(f.get('Received')),
        callId: f.get('Call-ID') ?? '',
        userAgent: notSet(f.get('User-Agent')),
        socket: f.get('Socket') ?? '',
      });
    }
  }
  return out;
}

export async function startKamailio(options: KamailioOptions = {}): Promise<Kamailio> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-kamailio-'));
  const [udp, tcp, tls] = await allocatePorts(3);
  const ports: KamailioPorts = {
    udp: udp!,
    tcp: options.tcp ? tcp : undefined,
    tls: options.tls ? tls : undefined,
  };
  const cfgPath = join(dir, 'kamailio.cfg');
  await writeFile(cfgPath, kamailioConfig(options, ports, dir));
  if (options.tls) await writeFile(join(dir, 'tls.cfg'), tlsConfig(options.tls));
  const ctl = join(dir, 'kamailio_ctl');

  const proc = startPeerProcess({
    name: 'kamailio',
    command: KAMAILIO,
    // -DD: no daemon (workers are forked, the main process stays our child);
    // -E: log to stderr; -Y/-P/-w: runtime dir, pid file and cwd in the temp dir.
    args: ['-DD', '-E', '-f', cfgPath, '-Y', dir, '-P', join(dir, 'kamailio.pid'), '-w', dir],
    cwd: dir,
    tempDir: dir,
  });

  const rpc = async (command: string, ...args: string[]): Promise<string> => {
    const { stdout } = await exec(KAMCMD, ['-s', `unix:${ctl}`, command, ...args], {
      timeout: 5000,
    });
    return stdout;
  };

  await proc.waitReady(async () => {
    if (!isListening(ports.udp, 'udp')) return false;
    if (ports.tcp && !isListening(ports.tcp, 'tcp')) return false;
    if (ports.tls && !isListening(ports.tls, 'tcp')) return false;
    if (!existsSync(ctl)) return false;
    try {
      await rpc('core.version');
      return true;
    } catch {
      return false;
    }
  }, options.startTimeoutMs ?? 10_000);

  const requests = (method?: string) =>
    parseRequestLog(proc.output()).filter((r) => !method || r.method === method);

  return {
    host: '127.0.0.1',
    udpPort: ports.udp,
    tcpPort: ports.tcp,
    tlsPort: ports.tls,
    pid: proc.pid,
    dir,
    output: proc.output,
    requests,
    registerCount: (username) =>
      requests('REGISTER').filter((r) => !username || r.toUser === username).length,
    waitForRequest: async (match, timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = requests().find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`kamailio: no matching request within ${timeoutMs} ms`);
        await sleep(50);
      }
    },
    locations: async (aor) => {
      const all = parseUlDump(await rpc('ul.dump'));
      return aor === undefined ? all : all.filter((l) => l.aor === aor);
    },
    rpc,
    stop: () => proc.stop(),
  };
}
