// Child process for worker-heap.test.ts: applies startWorkerOldSpaceAt(argv[2])
// then runs a worker that keeps 60,000 objects alive while replacing them
// (about 50 MB promoted in all: what ended call sessions do to the media
// worker's old generation) and prints how many full collections it ran.
import { Worker } from 'node:worker_threads';
import { startWorkerOldSpaceAt } from '../worker/worker-heap.js';

startWorkerOldSpaceAt(Number(process.argv[2]));
const churn = `
const { PerformanceObserver, constants } = require('node:perf_hooks');
const { parentPort } = require('node:worker_threads');
let full = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full++;
}).observe({ entryTypes: ['gc'] });
const live = [];
for (let round = 0; round < 150; round++) {
  for (let k = 0; k < 2000; k++) live.push({ samples: new Array(8).fill(k), name: 'call' + k });
  if (live.length > 60000) live.splice(0, 2000);
}
setTimeout(() => parentPort.postMessage(full), 50);`;
new Worker(churn, { eval: true }).once('message', (full: number) => {
  process.stdout.write(`${JSON.stringify({ full })}\n`);
  process.exit(0);
});
