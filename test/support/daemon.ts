// Starts the real daemon the way the README says (`npm start`), on a fresh
// SQLite file and a free HTTP port, and stops it by its process group.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Daemon {
  baseUrl: string;
  dbPath: string;
  child: ChildProcess;
  output(): string;
  /** The daemon's own process (npm start runs it as a grandchild). */
  pid: number;
  /** Signals the daemon process (SIGKILL: its whole process group) and waits for npm's exit code, which is the daemon's. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  api(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any; headers: Headers }>;
}

export async function startDaemon(
  env: Record<string, string> = {},
  timeoutMs = 40_000, // three daemons starting at once on a loaded 2-core machine have taken over 20 s
): Promise<Daemon> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-daemon-'));
  const dbPath = env.GATEWAY_DB_PATH ?? join(dir, 'gateway.sqlite');
  const child = spawn('npm', ['start', '--silent'], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      GATEWAY_HTTP_PORT: '0',
      GATEWAY_SIP_PORT: '0',
      GATEWAY_DB_PATH: dbPath,
      GATEWAY_LOG_LEVEL: 'info',
      // recordings of test calls in the test's own directory, not the repository's ./data
      GATEWAY_RECORDING_DIR: join(dir, 'recordings'),
      // Tests share two cores with each other: an event loop slowed by the machine, not by
      // the daemon's own load, must not shed their requests (the burst test sets its own).
      GATEWAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );

  let pid = 0;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`daemon did not start in ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    const check = () => {
      const m = /"pid":(\d+)[^\n]*"port":(\d+)[^\n]*"msg":"gateway listening"/.exec(out);
      if (m) {
        clearTimeout(timer);
        // Once found, stop: a regex over the whole output at every chunk flattens a string
        // that keeps growing (a fifth of the load runner's CPU over a run).
        child.stdout!.off('data', check);
        pid = Number(m[1]);
        resolve(Number(m[2]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code}:\n${out}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    dbPath,
    child,
    pid,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.pid) {
        try {
          if (signal === 'SIGKILL') process.kill(-child.pid, signal);
          else process.kill(pid, signal);
        } catch {
          /* already gone */
        }
      }
      return exited;
    },
    api: async (method, path, body, headers = {}) => {
      const res = await fetch(baseUrl + path, {
        method,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return {
        status: res.status,
        json: text ? JSON.parse(text) : undefined,
        headers: res.headers,
      };
    },
  };
}

/** Runs a command to completion and returns its exit code and output. */
export function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}
