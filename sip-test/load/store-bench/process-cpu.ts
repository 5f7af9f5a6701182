// CPU of the processes a store bench run watches, from /proc: one process
// with all its threads (a daemon: its media worker and, on PostgreSQL, its
// store worker), a server and every child it forked (PostgreSQL's postmaster
// and its backends, the ones that exited during the window included), and
// this runner itself. A window reads them all at its two ends.
import { readdirSync, readFileSync } from 'node:fs';
import { cpuSeconds } from '../gateway-load/proc-stats.js';

/** USER_HZ, as in proc-stats. */
const HZ = 100;

export interface Watched {
  name: string;
  /** CPU seconds used so far (undefined when the process is gone). */
  seconds(): number | undefined;
}

/** Fields of /proc/<pid>/stat from field 3 (state) on, or undefined when it is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

export function oneProcess(name: string, pid: number): Watched {
  return {
    name,
    seconds: () => {
      try {
        return cpuSeconds(pid);
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * A server and its children: the leader's own CPU and what it has reaped
 * (cutime + cstime: children that ended), plus every live child's own and
 * reaped CPU. A child that exits inside the window moves from the second
 * sum to the first, so the delta stays whole.
 */
export function processTree(name: string, leader: number): Watched {
  const total = (f: string[]): number =>
    (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / HZ;
  return {
    name,
    seconds: () => {
      const own = statFields(leader);
      if (!own) return undefined;
      let sum = total(own);
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const f = statFields(Number(entry));
        if (f && Number(f[1]) === leader) sum += total(f);
      }
      return sum;
    },
  };
}

/** This runner (the load generator): its own CPU, threads included. */
export function thisProcess(name: string): Watched {
  return {
    name,
    seconds: () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1e6;
    },
  };
}

export interface CpuFigure {
  /** CPU seconds used in the window, ms. */
  cpuMs: number;
  /** Average share of one core over the window, %. */
  pctOfCore: number;
  /** cpuMs divided by the window's unit of work (a completed call, an answered request). */
  msPerUnit: number;
}

/** Opens a window over `watched`; the returned function closes it, given the units of work done. */
export function openCpuWindow(
  watched: Watched[],
): () => { seconds: number; per: (units: number) => Record<string, CpuFigure> } {
  const t0 = performance.now();
  const before = watched.map((w) => w.seconds());
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const after = watched.map((w) => w.seconds());
    return {
      seconds,
      per: (units) =>
        Object.fromEntries(
          watched.map((w, i) => {
            const b = before[i];
            const a = after[i];
            const cpuMs = a !== undefined && b !== undefined ? (a - b) * 1000 : NaN;
            return [
              w.name,
              {
                cpuMs: Math.round(cpuMs),
                pctOfCore: Math.round((cpuMs / 1000 / seconds) * 1000) / 10,
                msPerUnit: units > 0 ? Math.round((cpuMs / units) * 100) / 100 : NaN,
              },
            ];
          }),
        ),
    };
  };
}
