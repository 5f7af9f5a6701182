// What the runner reads about the daemon from outside: CPU ticks, RSS and
// descriptors from /proc/<pid>, UDP sockets it holds in a port range, and
// values from its Prometheus /metrics.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** USER_HZ: clock ticks per second for utime/stime (100 on Linux everywhere we run). */
const TICKS_PER_SECOND = 100;

/** utime + stime of one process, in seconds (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may contain spaces: split after its closing parenthesis
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** A CPU window: call the returned function to get the % of one core used since. */
export function cpuWindow(pid: number): () => { cpuPct: number; seconds: number } {
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    return { cpuPct: ((cpuSeconds(pid) - c0) / seconds) * 100, seconds };
  };
}

/** utime + stime of several processes, in seconds; one that has gone counts 0. */
function cpuSecondsOf(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuSeconds(pid);
    } catch {
      // exited: its time is no longer readable
    }
  }
  return total;
}

/**
 * A CPU window over a set of processes (the load generators): the % of one
 * core they used together since. The set is read at the start: a process
 * started later is not counted.
 */
export function cpuWindowOf(pids: number[]): () => number {
  const c0 = cpuSecondsOf(pids);
  const t0 = performance.now();
  return () => ((cpuSecondsOf(pids) - c0) / ((performance.now() - t0) / 1000)) * 100;
}

/** Busy and total jiffies of the whole machine (the `cpu` line of /proc/stat). */
function machineJiffies(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/**
 * A window over the whole machine: the % of one core that every process
 * used together since (200 on two cores saturated), whoever they belong to.
 */
export function machineBusyWindow(cores: number): () => number {
  const j0 = machineJiffies();
  return () => {
    const j = machineJiffies();
    const total = j.total - j0.total;
    return total > 0 ? ((j.busy - j0.busy) / total) * cores * 100 : NaN;
  };
}

export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed between readdir and readlink
    }
  }
  return inodes;
}

/** This process's sockets in /proc/net/<proto> and /proc/net/<proto>6: local port and state. */
function ownSockets(pid: number, proto: 'tcp' | 'udp'): { port: number; state: string }[] {
  const inodes = socketInodes(pid);
  const found: { port: number; state: string }[] = [];
  for (const file of [`/proc/net/${proto}`, `/proc/net/${proto}6`]) {
    let lines: string[];
    try {
      lines = readFileSync(file, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || !inodes.has(cols[9]!)) continue;
      found.push({ port: parseInt(cols[1]!.split(':')[1] ?? '', 16), state: cols[3]! });
    }
  }
  return found;
}

/** Established TCP connections of this process on local port `port` (HTTP keep-alive clients). */
export function tcpConnectionsOnPort(pid: number, port: number): number {
  return ownSockets(pid, 'tcp').filter((s) => s.state === '01' && s.port === port).length;
}

/** UDP sockets of this process bound to a local port in [min, max]. */
export function udpSocketsInRange(pid: number, min: number, max: number): number {
  return ownSockets(pid, 'udp').filter((s) => s.port >= min && s.port <= max).length;
}

/** One sample's value from a Prometheus text exposition (first match), NaN when absent. */
export function metricValue(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([^\\s]+)`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** Names of the metrics the daemon exposes (for the report: what was available). */
export function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
}
