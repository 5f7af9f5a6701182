// A test peer's process (Kamailio, baresip): spawned in a process group of
// its own, its stdout and stderr kept, readiness polled with a deadline, and
// stopped by its PID (SIGTERM, then SIGKILL to its own group after a grace
// period). Peers still running when the test process exits are killed the
// same way, so a failed test never leaves one behind.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { allocatePort } from '../runner/sipp-runner.js';

export interface PeerProcessOptions {
  /** Shown in errors ("kamailio did not start ..."). */
  name: string;
  command: string;
  args: string[];
  cwd: string;
  /** Removed by stop() once the process is gone. */
  tempDir: string;
  env?: NodeJS.ProcessEnv;
  /** Feed stdin from a pipe (kept open) instead of /dev/null. */
  stdinPipe?: boolean;
  /** Run as this user (a server that refuses root, e.g. PostgreSQL). */
  uid?: number;
  gid?: number;
  /** What stop() sends first; default SIGTERM. */
  stopSignal?: NodeJS.Signals;
}

export interface PeerProcess {
  pid: number;
  /** Everything written to stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
  isRunning(): boolean;
  /** Writes to the process's stdin (stdinPipe only). */
  write(text: string): void;
  /**
   * Polls `ready` every 100 ms until it returns true; rejects with the
   * output if the process exits first or `timeoutMs` passes (the process is
   * then stopped).
   */
  waitReady(ready: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void>;
  /** SIGTERM, SIGKILL to the group after `graceMs` (default 3000), then removes the temp dir. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // The peer leads its own group (spawned detached), so -pid reaches it and
    // the children it forked, and nothing else.
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of live) killGroup(pid, 'SIGKILL');
  });
}

export function startPeerProcess(o: PeerProcessOptions): PeerProcess {
  installExitHook();
  const child = spawn(o.command, o.args, {
    cwd: o.cwd,
    env: o.env ?? process.env,
    detached: true,
    stdio: [o.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    ...(o.uid !== undefined ? { uid: o.uid } : {}),
    ...(o.gid !== undefined ? { gid: o.gid } : {}),
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stdin?.on('error', () => {
    /* the peer went away: writes are best effort */
  });
  let running = true;
  const pid = child.pid ?? -1;
  const exited = new Promise<number | string>((resolve) => {
    child.once('error', (e) => {
      running = false;
      out += `\n[spawn error] ${e.message}\n`;
      resolve('spawn-error');
    });
    child.once('exit', (code, signal) => {
      running = false;
      resolve(code ?? signal ?? 'unknown');
    });
  });
  if (pid > 0) live.add(pid);

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 3000): Promise<void> => {
    stopping ??= (async () => {
      if (running && pid > 0) {
        try {
          process.kill(pid, o.stopSignal ?? 'SIGTERM');
        } catch {
          /* already gone */
        }
        const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs));
        if ((await Promise.race([exited, timer])) === 'timeout') killGroup(pid, 'SIGKILL');
        await exited;
      }
      // Forked children that outlived their parent (SIGKILLed) are still ours.
      if (pid > 0 && groupAlive(pid)) {
        killGroup(pid, 'SIGKILL');
        for (let i = 0; i < 20 && groupAlive(pid); i++) await sleep(50);
      }
      live.delete(pid);
      await rm(o.tempDir, { recursive: true, force: true });
    })();
    return stopping;
  };

  const waitReady = async (
    ready: () => boolean | Promise<boolean>,
    timeoutMs: number,
  ): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!running) {
        await stop();
        throw new Error(`${o.name} exited (${String(await exited)}) while starting:\n${out}`);
      }
      if (await ready()) return;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`${o.name} did not start within ${timeoutMs} ms:\n${out}`);
      }
      await sleep(100);
    }
  };

  return {
    pid,
    output: () => out,
    exited,
    isRunning: () => running,
    write: (text) => {
      if (running) child.stdin?.write(text);
    },
    waitReady,
    stop,
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `n` distinct ports, each free for both UDP and TCP on 127.0.0.1 when allocated. */
export async function allocatePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await allocatePort());
  return [...ports];
}

/** Whether something on this host listens on 127.0.0.1/0.0.0.0 `port` (Linux /proc). */
export function isListening(port: number, transport: 'udp' | 'tcp'): boolean {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const file of transport === 'udp'
    ? ['/proc/net/udp', '/proc/net/udp6']
    : ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table = '';
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (!cols[1]?.endsWith(suffix)) continue;
      // TCP state 0A is LISTEN; any bound UDP socket counts.
      if (transport === 'udp' || cols[3] === '0A') return true;
    }
  }
  return false;
}
