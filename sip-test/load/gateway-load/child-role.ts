// The runner's helper processes (RTP probe, stamp agent) answer requests over
// the IPC channel of child_process.fork: { id, cmd, ...args } → { id, result }.
import { fork, type ChildProcess } from 'node:child_process';

type Handler = (request: Record<string, unknown>) => unknown;

/** In the child: answer the parent's requests; exits when the parent goes away. */
export function serveParent(handler: Handler): void {
  process.on('message', (m: { id: number; cmd: string }) => {
    let result: unknown;
    try {
      result = handler(m);
    } catch (err) {
      result = { error: String(err) };
    }
    process.send?.({ id: m.id, result });
  });
  process.on('disconnect', () => process.exit(0));
}

export interface ChildHandle {
  pid: number;
  /** The child's first message (its "ready" announcement). */
  ready: Promise<Record<string, unknown>>;
  request<T>(cmd: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  kill(): void;
}

/** Starts a TypeScript helper (through tsx) in its own process. */
export function startChild(file: string, args: string[]): ChildHandle {
  const child: ChildProcess = fork(file, args, {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 1;
  const pending = new Map<number, (v: unknown) => void>();
  let resolveReady: (v: Record<string, unknown>) => void = () => undefined;
  const ready = new Promise<Record<string, unknown>>((r) => (resolveReady = r));
  child.on('message', (m: { id?: number; result?: unknown; ready?: boolean }) => {
    if (m.ready) return resolveReady(m as Record<string, unknown>);
    const done = m.id !== undefined ? pending.get(m.id) : undefined;
    if (done && m.id !== undefined) {
      pending.delete(m.id);
      done(m.result);
    }
  });
  return {
    pid: child.pid ?? -1,
    ready,
    request: <T>(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 5000) =>
      new Promise<T>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file}: no answer to ${cmd} in ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, (v) => {
          clearTimeout(timer);
          resolve(v as T);
        });
        child.send({ id, cmd, ...args });
      }),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
