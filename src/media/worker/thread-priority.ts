/**
 * Raises (or lowers) the scheduling priority of the calling thread only.
 * Linux schedules threads as tasks: setpriority(2) on a thread id changes
 * that thread's nice value, and /proc/thread-self names the caller's id.
 * The media worker uses it so that its 20 ms sends are not queued behind
 * the main thread's call set-up or other processes when the cores are
 * busy (what rtpengine and FreeSWITCH do for their media threads). A
 * negative nice value needs CAP_SYS_NICE (or root); without it the thread
 * keeps its priority and the result says why.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { currentThreadId } from '../../thread-cpu.js';

export interface ThreadPriority {
  /** The thread's kernel id (null where it cannot be known). */
  tid: number | null;
  /** The nice value asked for. */
  requested: number;
  /** The nice value the thread has now (null where it cannot be read). */
  nice: number | null;
  /** Why the request was not applied (e.g. EACCES: no CAP_SYS_NICE). */
  error?: string;
  /** SCHED_RR priority asked for (absent: none asked), and the one the thread has (0: none). */
  realtimeRequested?: number;
  realtime?: number | null;
  /** Why the real-time priority was not applied. */
  realtimeError?: string;
}

export function setThreadNice(requested: number): ThreadPriority {
  const tid = currentThreadId();
  if (tid === null) {
    // elsewhere setpriority would change the whole process, main thread included
    return { tid, requested, nice: null, error: 'per-thread priority needs Linux' };
  }
  try {
    setPriority(tid, requested);
    return { tid, requested, nice: getPriority(tid) };
  } catch (err) {
    // a SystemError: the errno name (EACCES without CAP_SYS_NICE) is in info.code
    const e = err as { code?: string; info?: { code?: string } };
    return { tid, requested, nice: getPriority(tid), error: e.info?.code ?? e.code ?? String(err) };
  }
}

const SCHED_FIFO = 1;
const SCHED_RR = 2;

/** The thread's SCHED_RR / SCHED_FIFO priority, 0 under a normal policy, null if unreadable. */
export function realtimePriorityOf(tid: number): number | null {
  try {
    // proc(5) /proc/<pid>/stat: after the ")" of the name, field 3 is first;
    // rt_priority is field 40, policy field 41
    const fields = readFileSync(`/proc/${tid}/stat`, 'utf8').split(') ').pop()!.split(' ');
    const policy = Number(fields[41 - 3]);
    return policy === SCHED_RR || policy === SCHED_FIFO ? Number(fields[40 - 3]) : 0;
  } catch {
    return null;
  }
}

/**
 * Puts a thread (or process) under SCHED_RR at `priority` (1-99): the kernel
 * then runs it as soon as it wakes, ahead of every normal task however nice
 * (a nice value only weighs its share: under call churn at 20 calls/s the
 * media worker at nice -10 still waited for a core p99 0.57 ms, worst 4 ms,
 * after a wake-up; under SCHED_RR 10 p99 0.04 ms, worst 0.25 ms; perf sched).
 * Linux keeps 5 % of each second for normal tasks whatever real-time tasks
 * do (sched_rt_runtime_us). Node has no sched_setscheduler(2), so chrt(1)
 * from util-linux sets it; it needs CAP_SYS_NICE or RLIMIT_RTPRIO.
 */
export function setThreadRealtime(
  tid: number,
  priority: number,
): { realtime: number | null; error?: string } {
  // reset-on-fork: a process started from the thread does not inherit the policy
  const args = ['--rr', '--reset-on-fork', '--pid', String(priority), String(tid)];
  const run = spawnSync('chrt', args, {
    encoding: 'utf8',
    timeout: 5000,
  });
  const realtime = realtimePriorityOf(tid);
  if (run.error)
    return { realtime, error: (run.error as { code?: string }).code ?? run.error.message };
  if (run.status !== 0)
    return { realtime, error: run.stderr.trim() || `chrt exited with ${run.status}` };
  return { realtime };
}

/** The calling thread's nice value and, when `realtime` > 0, its SCHED_RR priority. */
export function setThreadPriority(nice: number, realtime = 0): ThreadPriority {
  const result = setThreadNice(nice);
  if (realtime <= 0 || result.tid === null) return result;
  const rt = setThreadRealtime(result.tid, realtime);
  result.realtimeRequested = realtime;
  result.realtime = rt.realtime;
  if (rt.error !== undefined) result.realtimeError = rt.error;
  return result;
}
