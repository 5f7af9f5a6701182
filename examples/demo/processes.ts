// The demo's child processes (SIPp, the echo agent, the daemon): started in a
// process group of their own, their output kept in a log file, stopped by
// their own process id and, when that is not enough, by their own group.
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createWriteStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';

export interface DemoProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Everything the process printed so far. */
  output(): string;
  /** The last lines it printed, for an error message. */
  tail(lines?: number): string;
  /** Resolves with the first match of `pattern` in its output; rejects if it exits or `timeoutMs` passes first. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  readonly exited: Promise<number | null>;
  hasExited(): boolean;
  /** SIGTERM to `signalPid` (default: the process), then SIGKILL to its group after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** The process that should receive SIGTERM (e.g. the daemon under tsx). */
  signalPid: number;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
  logFile: string;
}

/** Path of tsx's command-line entry, run with this very node binary. */
export function tsxCli(): string {
  return createRequire(import.meta.url).resolve('tsx/cli');
}

export function startProcess(o: StartOptions): Promise<DemoProcess> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(o.logFile);
    let out = '';
    const child: ChildProcess = spawn(o.command, o.args, {
      cwd: o.cwd,
      env: o.env ?? process.env,
      // Its own process group: a Ctrl-C in the terminal reaches the demo only,
      // which then stops every child in order (the daemon first, so it can hang up).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const onData = (d: Buffer): void => {
      out += d.toString('utf8');
      log.write(d);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    let done = false;
    const exited = new Promise<number | null>((res) => {
      child.once('exit', (code) => {
        done = true;
        log.end();
        res(code);
      });
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      log.end();
      reject(
        err.code === 'ENOENT'
          ? new Error(`${o.name}: command "${o.command}" not found`)
          : new Error(`${o.name}: ${err.message}`),
      );
    });
    child.once('spawn', () => {
      const pid = child.pid ?? -1;
      const proc: DemoProcess = {
        name: o.name,
        pid,
        signalPid: pid,
        logFile: o.logFile,
        output: () => out,
        tail: (lines = 15) => out.trimEnd().split('\n').slice(-lines).join('\n'),
        exited,
        hasExited: () => done,
        waitFor: (pattern, timeoutMs) =>
          new Promise((res, rej) => {
            const check = (): boolean => {
              const m = pattern.exec(out);
              if (m) {
                cleanup();
                res(m);
              }
              return !!m;
            };
            const timer = setTimeout(() => {
              cleanup();
              rej(new Error(`${o.name} was not ready after ${timeoutMs / 1000} s`));
            }, timeoutMs);
            const onExit = (code: number | null): void => {
              if (check()) return;
              cleanup();
              rej(new Error(`${o.name} exited (code ${code}) before it was ready`));
            };
            const cleanup = (): void => {
              clearTimeout(timer);
              child.stdout?.off('data', check);
              child.stderr?.off('data', check);
              child.off('exit', onExit);
            };
            if (check()) return;
            child.stdout?.on('data', check);
            child.stderr?.on('data', check);
            child.once('exit', onExit);
          }),
        stop: async (graceMs = 5000) => {
          if (done) return;
          try {
            process.kill(proc.signalPid, 'SIGTERM');
          } catch {
            /* already gone */
          }
          const killed = await Promise.race([
            exited.then(() => false),
            new Promise<boolean>((r) => setTimeout(() => r(true), graceMs).unref()),
          ]);
          if (!killed) return;
          try {
            process.kill(-pid, 'SIGKILL'); // the group this process leads: only what we started
          } catch {
            /* already gone */
          }
          await exited;
        },
      };
      resolve(proc);
    });
  });
}

/** A port the OS says is free on 127.0.0.1 for both TCP and UDP. */
export async function freePort(): Promise<number> {
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
  throw new Error('no free port on 127.0.0.1');
}

/**
 * Whether something has bound UDP `port` (read from /proc/net/udp, so the
 * probe never takes the port itself); undefined where /proc is not there.
 */
export function udpPortBound(port: number): boolean | undefined {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let seen: boolean | undefined;
  for (const file of ['/proc/net/udp', '/proc/net/udp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    seen ??= false;
    for (const line of text.split('\n')) {
      if (line.trim().split(/\s+/)[1]?.endsWith(hex)) return true;
    }
  }
  return seen;
}
