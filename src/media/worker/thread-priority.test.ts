import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { realtimePriorityOf, setThreadRealtime } from './thread-priority.js';

// root, or a process with CAP_SYS_NICE / RLIMIT_RTPRIO (CI runs as root)
const mayRealtime = process.getuid?.() === 0;
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

function sleeper(): number {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(child);
  return child.pid!;
}

describe.runIf(process.platform === 'linux')('setThreadRealtime', () => {
  it('reads a normal task as priority 0', () => {
    expect(realtimePriorityOf(sleeper())).toBe(0);
  });

  it('puts the task under SCHED_RR where permitted, else says why and leaves its policy', () => {
    const pid = sleeper();
    const result = setThreadRealtime(pid, 7);
    if (mayRealtime) {
      expect(result).toEqual({ realtime: 7 });
      expect(realtimePriorityOf(pid)).toBe(7); // the kernel's view
      // what it starts does not inherit the policy
      expect(execFileSync('chrt', ['-p', String(pid)], { encoding: 'utf8' })).toContain(
        'SCHED_RR|SCHED_RESET_ON_FORK',
      );
    } else {
      expect(result.error).toBeTruthy();
      expect(realtimePriorityOf(pid)).toBe(0);
    }
  });

  it('reports a task that is gone', () => {
    const result = setThreadRealtime(2 ** 22 + 1, 7); // above pid_max's ceiling
    expect(result.error).toBeTruthy();
    expect(result.realtime).toBeNull();
  });
});
