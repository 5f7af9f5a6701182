// baresip 1.0.0 as a test peer on 127.0.0.1: a far end that answers calls
// by itself, sends a tone or a WAV file, records what it hears (sndfile),
// optionally with SDES-SRTP, and reports call events (ctrl_tcp) and RTP
// statistics. Foreground child process with a generated config dir (-f).
// Test fixture only; see baresip-config.ts for what the config does.
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocatePort } from '../runner/sipp-runner.js';
import { baresipConfig, type BaresipConfigOptions } from './baresip-config.js';
import { BaresipControl, type BaresipEvent } from './baresip-control.js';
import { isListening, sleep, startPeerProcess } from './peer-process.js';

export type { BaresipAudio, BaresipMediaEncryption } from './baresip-config.js';
export type { BaresipEvent } from './baresip-control.js';

const BARESIP = '/usr/bin/baresip';

export interface BaresipOptions extends BaresipConfigOptions {
  /** Hang up this long after each call is established (ctrl_tcp 'hangup'). Default: never. */
  hangupAfterMs?: number;
  /** Where sndfile writes; not removed by stop(). Default: a folder in the temp dir (removed). */
  recordDir?: string;
  /** How long start-up may take before it fails with baresip's output. Default 10000. */
  startTimeoutMs?: number;
}

/** The RTP summary baresip prints when a call ends (rtp_stats yes). */
export interface BaresipCallStats {
  /** The remote party's URI. */
  peer: string;
  durationSec: number;
  txPackets: number;
  rxPackets: number;
  txErrors: number;
  rxErrors: number;
  txKbps: number;
  rxKbps: number;
}

export interface Baresip {
  host: '127.0.0.1';
  user: string;
  /** UDP and TCP. */
  sipPort: number;
  /** sipPort + 1 when TLS is on. */
  tlsPort: number | undefined;
  ctrlPort: number;
  /** What to dial: sip:<user>@127.0.0.1:<sipPort>. */
  uri: string;
  /** The URI for one transport (tls: the TLS port, ;transport=tls). */
  uriFor(transport: 'udp' | 'tcp' | 'tls'): string;
  pid: number;
  dir: string;
  /** stdout and stderr so far, colour codes removed. */
  output(): string;
  /** ctrl_tcp events so far. */
  events(type?: string): BaresipEvent[];
  /** Resolves with the first event of `type` (past or future) that matches; rejects after timeoutMs. */
  waitForEvent(
    type: string,
    timeoutMs?: number,
    match?: (e: BaresipEvent) => boolean,
  ): Promise<BaresipEvent>;
  /** A menu command over ctrl_tcp ('callstat', 'audio_debug', 'listcalls', ...): its output. */
  command(command: string, params?: string): Promise<string>;
  /** Calls out (menu 'dial'). */
  dial(uri: string): Promise<void>;
  /** Answers the ringing call (menu 'accept'; for answerMode 'manual' or 'early'). */
  answer(): Promise<void>;
  /** Hangs up the current call. */
  hangup(): Promise<void>;
  /** WAVs of decoded received audio (sndfile '-dec'), one per call; complete once the call ended. */
  recordedWavs(): string[];
  /** WAVs of what it sent (sndfile '-enc'). */
  sentWavs(): string[];
  /** One summary per ended call, in order. */
  callStats(): BaresipCallStats[];
  /** "srtp: failed to decrypt RTP packet" lines: SRTP packets that failed authentication. */
  srtpDecryptErrors(): number;
  /** Sends SIGTERM (SIGKILL after 3 s), then removes the temp dir. */
  stop(): Promise<void>;
}

// eslint-disable-next-line no-control-regex
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').replace(/\[;?m/g, '');

/** Parses the end-of-call summaries in baresip's output. */
export function parseCallStats(output: string): BaresipCallStats[] {
  const re =
    /Call with (\S+) terminated \(duration: (\d+) secs?\)\s*\n\s*audio\s+Transmit:\s+Receive:\s*\npackets:\s+(\d+)\s+(\d+)\s*\navg\. bitrate:\s+([\d.]+)\s+([\d.]+).*\nerrors:\s+(\d+)\s+(\d+)/g;
  return [...output.matchAll(re)].map((m) => ({
    peer: m[1]!,
    durationSec: Number(m[2]),
    txPackets: Number(m[3]),
    rxPackets: Number(m[4]),
    txKbps: Number(m[5]),
    rxKbps: Number(m[6]),
    txErrors: Number(m[7]),
    rxErrors: Number(m[8]),
  }));
}

/** A port free for UDP+TCP whose successor is free for TCP (baresip's TLS listener). */
async function allocateSipPort(tls: boolean): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await allocatePort();
    if (!tls) return port;
    const nextFree = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port + 1, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (nextFree) return port;
  }
  throw new Error('baresip: no free port pair');
}

/**
 * Starts baresip on free ports. A port found free can be taken by another
 * process before baresip binds it (the suite runs many peers at once): a
 * start that fails with "Address already in use" is tried again on new ports.
 */
export async function startBaresip(options: BaresipOptions = {}): Promise<Baresip> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startBaresipOnce(options);
    } catch (e) {
      if (attempt >= 3 || !(e as Error).message.includes('Address already in use')) throw e;
    }
  }
}

async function startBaresipOnce(options: BaresipOptions): Promise<Baresip> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-baresip-'));
  const recordDir = options.recordDir ?? join(dir, 'recordings');
  await mkdir(recordDir, { recursive: true });
  // baresip opens its TLS listener on the next port even without a certificate of ours.
  const sipPort = await allocateSipPort(true);
  let ctrlPort = await allocatePort();
  while (ctrlPort === sipPort || ctrlPort === sipPort + 1) ctrlPort = await allocatePort();

  let tlsPemPath: string | undefined;
  if (options.tls) {
    // libre loads the certificate and the key from one file
    tlsPemPath = join(dir, 'sip-tls.pem');
    const [cert, key] = await Promise.all([
      readFile(options.tls.certPath, 'utf8'),
      readFile(options.tls.keyPath, 'utf8'),
    ]);
    await writeFile(tlsPemPath, `${cert.trim()}\n${key.trim()}\n`, { mode: 0o600 });
  }
  const files = baresipConfig(options, { sip: sipPort, ctrl: ctrlPort }, { recordDir, tlsPemPath });
  await Promise.all([
    writeFile(join(dir, 'config'), files.config),
    writeFile(join(dir, 'accounts'), files.accounts),
    writeFile(join(dir, 'contacts'), files.contacts),
  ]);

  const proc = startPeerProcess({
    name: 'baresip',
    command: BARESIP,
    args: ['-f', dir],
    cwd: dir,
    tempDir: dir,
    // HOME too: nothing of the user's ~/.baresip is read or written
    env: { ...process.env, HOME: dir },
  });
  await proc.waitReady(
    () =>
      proc.output().includes('baresip is ready.') &&
      isListening(sipPort, 'udp') &&
      isListening(ctrlPort, 'tcp') &&
      (!options.tls || isListening(sipPort + 1, 'tcp')),
    options.startTimeoutMs ?? 10_000,
  );

  let control: BaresipControl;
  try {
    control = await BaresipControl.connect(ctrlPort);
  } catch (e) {
    await proc.stop();
    throw new Error(`baresip: ctrl_tcp unreachable (${(e as Error).message}):\n${proc.output()}`);
  }
  const hangupTimers = new Set<NodeJS.Timeout>();
  if (options.hangupAfterMs !== undefined) {
    const after = options.hangupAfterMs;
    control.onEvent((e) => {
      if (e.type !== 'CALL_ESTABLISHED') return;
      const t = setTimeout(() => {
        hangupTimers.delete(t);
        control.command('hangup').catch(() => {
          /* the call or baresip is already gone */
        });
      }, after);
      hangupTimers.add(t);
    });
  }

  const user = options.user ?? 'baresip';
  const output = () => stripAnsi(proc.output());
  const dumps = (kind: 'enc' | 'dec') =>
    readdirSync(recordDir)
      .filter((f) => f.startsWith('dump-') && f.endsWith(`-${kind}.wav`))
      .sort()
      .map((f) => join(recordDir, f));
  const tlsPort = options.tls ? sipPort + 1 : undefined;

  return {
    host: '127.0.0.1',
    user,
    sipPort,
    tlsPort,
    ctrlPort,
    uri: `sip:${user}@127.0.0.1:${sipPort}`,
    uriFor: (transport) =>
      transport === 'tls'
        ? `sip:${user}@127.0.0.1:${sipPort + 1};transport=tls`
        : `sip:${user}@127.0.0.1:${sipPort}${transport === 'tcp' ? ';transport=tcp' : ''}`,
    pid: proc.pid,
    dir,
    output,
    events: (type) => control.events.filter((e) => !type || e.type === type),
    waitForEvent: async (type, timeoutMs = 5000, match = () => true) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = control.events.find((e) => e.type === type && match(e));
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`baresip: no ${type} event within ${timeoutMs} ms:\n${output()}`);
        await sleep(50);
      }
    },
    command: (command, params) => control.command(command, params),
    dial: async (uri) => {
      await control.command('dial', uri);
    },
    answer: async () => {
      await control.command('accept');
    },
    hangup: async () => {
      await control.command('hangup');
    },
    recordedWavs: () => dumps('dec'),
    sentWavs: () => dumps('enc'),
    callStats: () => parseCallStats(output()),
    srtpDecryptErrors: () => (output().match(/srtp: failed to decrypt RTP packet/g) ?? []).length,
    stop: async () => {
      for (const t of hangupTimers) clearTimeout(t);
      hangupTimers.clear();
      control.close();
      await proc.stop();
    },
  };
}
