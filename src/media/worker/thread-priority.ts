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
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

export interface ThreadPriority {
  /** The thread's kernel id (null where it cannot be known). */
  tid: number | null;
  /** The nice value asked for. */
  requested: number;
  /** The nice value the thread has now (null where it cannot be read). */
  nice: number | null;
  /** Why the request was not applied (e.g. EACCES: no CAP_SYS_NICE). */
  error?: string;
}

function currentThreadId(): number | null {
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

export function setThreadNice(requested: number): ThreadPriority {
  const tid = process.platform === 'linux' ? currentThreadId() : null;
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
