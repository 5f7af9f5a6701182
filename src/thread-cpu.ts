// CPU time of the daemon's own threads (issue 28: CPU per call of each
// thread), read from the kernel when /metrics is scraped: nothing runs per
// call. Linux schedules each thread as a task with its own counters in
// /proc/self/task/<tid>/stat (proc(5)); the threads say who they are by
// their kernel id, which /proc/thread-self names.
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * Clock ticks per second of the stat counters (sysconf(_SC_CLK_TCK)): 100 on
 * every Linux architecture Node runs on (USER_HZ); Node has no sysconf.
 */
const CLOCK_TICKS_PER_SECOND = 100;

/** The calling thread's kernel id (null off Linux or where /proc is not mounted). */
export function currentThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * User plus system CPU seconds of one thread of this process (null once it
 * has ended, or off Linux). proc(5): after the ")" closing the name, field 3
 * comes first; utime is field 14 and stime field 15.
 */
export function threadCpuSeconds(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[14 - 3]) + Number(fields[15 - 3]);
    return Number.isFinite(ticks) ? ticks / CLOCK_TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** CPU seconds by thread: the named ones, and `other` for the rest of the process. */
export interface ThreadCpuReading {
  thread: string;
  seconds: number;
}

/**
 * The threads worth naming (main, media worker, PostgreSQL store worker), each
 * registered by the thread itself or by whoever learns its id; the rest of
 * the process (V8's compiler and GC helpers, libuv's pool) is `other`.
 */
export class ThreadCpuTable {
  private readonly tids = new Map<string, () => number | null>();

  /** `tid`: the thread's id, or how to learn it once the thread has said (null until then). */
  register(thread: string, tid: number | null | (() => number | null)): void {
    this.tids.set(thread, typeof tid === 'function' ? tid : () => tid);
  }

  read(): ThreadCpuReading[] {
    const out: ThreadCpuReading[] = [];
    let named = 0;
    for (const [thread, tidOf] of this.tids) {
      const tid = tidOf();
      const seconds = tid === null ? null : threadCpuSeconds(tid);
      if (seconds === null) continue;
      out.push({ thread, seconds });
      named += seconds;
    }
    const u = process.cpuUsage();
    const total = (u.user + u.system) / 1e6;
    // the process counters and the threads' are sampled apart: never below 0
    out.push({ thread: 'other', seconds: Math.max(0, total - named) });
    return out;
  }
}
