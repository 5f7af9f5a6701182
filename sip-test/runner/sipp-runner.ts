// Starts sipp on a free loopback port, waits for its exit code and collects
// its logs. Only the process started here is ever killed.

import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, readFileSync, existsSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const SCENARIOS = resolve(HERE, '../scenarios');
const LOGS = resolve(HERE, '../logs');

export interface SippOptions {
  /** File name in sip-test/scenarios, or an absolute path (generated scenarios). */
  scenario: string;
  transport?: 'udp' | 'tcp';
  /** Calls to process before exiting (-m). Default 1. */
  calls?: number;
  /** Global timeout in seconds (-timeout, with -timeout_error). Default 15. */
  timeoutSec?: number;
  /** Anything else (e.g. -r 100 -l 1000, -key name value). */
  extraArgs?: string[];
  /** Write every message to messages.log (default true; off for load). */
  traceMessages?: boolean;
  /** UAC mode: the remote host:port sipp calls. */
  remote?: string;
}

export interface SippResult {
  /** sipp's exit code: 0 all calls succeeded, 1 some failed, 97/99/255 see sipp docs. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Contents of the -trace_err file (unexpected messages), '' when none. */
  errors: string;
  /** Contents of the -trace_msg file. */
  messages: string;
  /** sipp's own stdout/stderr. */
  output: string;
  logDir: string;
}

export interface SippProcess {
  port: number;
  pid: number;
  done: Promise<SippResult>;
  /** Kills this sipp (SIGKILL) if it is still running. */
  kill(): void;
}

let runCounter = 0;

/** A port the OS says is free for both UDP and TCP on 127.0.0.1. */
export async function allocatePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((res, rej) => {
      const s = createServer();
      s.once('error', rej);
      s.listen(0, '127.0.0.1', () => {
        const a = s.address();
        const p = a && typeof a === 'object' ? a.port : 0;
        s.close(() => res(p));
      });
    });
    const udpFree = await new Promise<boolean>((res) => {
      const u = createSocket('udp4');
      u.once('error', () => res(false));
      u.bind(port, '127.0.0.1', () => u.close(() => res(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no free port');
}

function isListening(port: number, transport: 'udp' | 'tcp'): boolean {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  for (const file of transport === 'udp'
    ? ['/proc/net/udp', '/proc/net/udp6']
    : ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      const lines = readFileSync(file, 'utf8').split('\n');
      for (const l of lines) {
        const cols = l.trim().split(/\s+/);
        if (!cols[1]?.includes(hex.trim())) continue;
        if (!cols[1].endsWith(hex.trim())) continue;
        if (transport === 'udp' || cols[3] === '0A') return true;
      }
    } catch {
      // not Linux: fall through to the delay below
    }
  }
  return false;
}

export async function startSipp(opts: SippOptions): Promise<SippProcess> {
  const transport = opts.transport ?? 'udp';
  const port = await allocatePort();
  const logDir = join(
    LOGS,
    `${opts.scenario.replace(/^.*\//, '').replace(/\.xml$/, '')}-${process.pid}-${++runCounter}`,
  );
  mkdirSync(logDir, { recursive: true });
  const errFile = join(logDir, 'errors.log');
  const msgFile = join(logDir, 'messages.log');
  const outFile = join(logDir, 'output.log');
  const args = [
    '-sf',
    isAbsolute(opts.scenario) ? opts.scenario : join(SCENARIOS, opts.scenario),
    '-i',
    '127.0.0.1',
    '-p',
    String(port),
    '-t',
    transport === 'tcp' ? 't1' : 'u1',
    '-m',
    String(opts.calls ?? 1),
    '-timeout',
    `${opts.timeoutSec ?? 15}s`,
    '-timeout_error',
    '-trace_err',
    '-error_file',
    errFile,
    // the message log costs SIPp CPU per message: off for load (traceMessages: false)
    ...(opts.traceMessages === false ? [] : ['-trace_msg', '-message_file', msgFile]),
    '-nostdin',
    ...(opts.extraArgs ?? []),
  ];
  if (opts.remote) args.push(opts.remote);
  const out = openSync(outFile, 'w');
  const child: ChildProcess = spawn('/usr/bin/sipp', args, { stdio: ['ignore', out, out] });
  closeSync(out);
  const done = new Promise<SippResult>((res) => {
    child.once('exit', (code, signal) => {
      const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8') : '');
      res({
        code,
        signal,
        errors: read(errFile),
        messages: read(msgFile),
        output: read(outFile),
        logDir,
      });
    });
  });
  let exited = false;
  void done.then(() => (exited = true));
  if (!opts.remote) {
    // UAS mode: wait until sipp's socket is bound (at most ~3 s).
    for (let i = 0; i < 60 && !exited && !isListening(port, transport); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    port,
    pid: child.pid ?? -1,
    done,
    kill: () => {
      if (!exited) child.kill('SIGKILL');
    },
  };
}
