import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { currentThreadId, threadCpuSeconds, ThreadCpuTable } from './thread-cpu.js';

const onLinux = process.platform === 'linux';

/** Spins until the process has used `ms` more of CPU (bounded by 5 s of wall time). */
function spin(ms: number): void {
  const used = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const target = used() + ms;
  const end = performance.now() + 5000;
  while (used() < target && performance.now() < end);
}

/**
 * A worker thread that says its kernel id, then, when asked, spins until it
 * has used `ms` more of CPU (its own counters: a loaded machine stretches the
 * wall time, not this), for at most 5 s.
 */
function spinningWorker(): Promise<{
  tid: number;
  spin(ms: number): Promise<void>;
  end(): Promise<number>;
}> {
  const w = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const { readFileSync, readlinkSync } = require('node:fs');
     const cpuMs = () => {
       const stat = readFileSync('/proc/thread-self/stat', 'latin1');
       const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
       return (Number(f[11]) + Number(f[12])) * 10;
     };
     parentPort.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop()));
     parentPort.on('message', (ms) => {
       const target = cpuMs() + ms;
       const end = performance.now() + 5000;
       while (cpuMs() < target && performance.now() < end);
       parentPort.postMessage('done');
     });`,
    { eval: true },
  );
  return new Promise((resolve) => {
    w.once('message', (tid: number) =>
      resolve({
        tid,
        spin: (ms) =>
          new Promise((done) => {
            w.once('message', () => done());
            w.postMessage(ms);
          }),
        end: () => w.terminate(),
      }),
    );
  });
}

describe.runIf(onLinux)('thread CPU from /proc', () => {
  it("the calling thread's id is a task of this process, and its CPU grows with work done on it", () => {
    const tid = currentThreadId()!;
    expect(tid).toBe(process.pid); // the main thread's task id is the process id
    const before = threadCpuSeconds(tid)!;
    spin(150);
    // the process's other threads (V8's helpers) may have a share of it
    expect(threadCpuSeconds(tid)! - before).toBeGreaterThanOrEqual(0.1);
  });

  it('work on a registered worker thread is counted on it, not on main; the rest of the process is other', async () => {
    const worker = await spinningWorker();
    const table = new ThreadCpuTable();
    table.register('main', currentThreadId());
    let known: number | null = null;
    table.register('media', () => known);
    // not yet known: no reading for it
    expect(table.read().map((r) => r.thread)).toEqual(['main', 'other']);
    known = worker.tid;
    const at = (readings: ReturnType<ThreadCpuTable['read']>, thread: string) =>
      readings.find((r) => r.thread === thread)!.seconds;
    const before = table.read();
    await worker.spin(200);
    const after = table.read();
    expect(at(after, 'media') - at(before, 'media')).toBeGreaterThanOrEqual(0.15);
    expect(at(after, 'main') - at(before, 'main')).toBeLessThan(0.1);
    expect(at(after, 'other')).toBeGreaterThanOrEqual(0);
    await worker.end();
    // an ended thread has no task left: it drops out of the reading
    expect(table.read().map((r) => r.thread)).toEqual(['main', 'other']);
  });
});
