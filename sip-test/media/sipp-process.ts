import { spawn } from 'node:child_process';
import { freeUdpPort } from './udp-ports.js';

export interface SippRun {
  pid: number;
  /** Resolves with SIPp's exit code (null when killed by a signal). */
  exited: Promise<{ code: number | null; output: string }>;
  kill(): void;
}

/**
 * Starts SIPp bounded by `-timeout` (and a kill timer on top), with its
 * control port allocated so parallel runs do not collide.
 */
export async function startSipp(args: string[], timeoutSec: number): Promise<SippRun> {
  const controlPort = await freeUdpPort();
  const child = spawn(
    'sipp',
    [
      ...args,
      '-nostdin',
      '-cp',
      String(controlPort),
      '-timeout',
      `${timeoutSec}s`,
      '-timeout_error',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const pid = child.pid ?? -1;
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const guard = setTimeout(kill, (timeoutSec + 5) * 1000);
  const exited = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, output });
    });
    child.on('error', (err) => {
      clearTimeout(guard);
      resolve({ code: -1, output: String(err) });
    });
  });
  return { pid, exited, kill };
}
