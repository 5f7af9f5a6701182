// Starts a TypeScript worker entry under tsx (npm start and the tests run the
// sources; a worker thread does not inherit the main thread's loader). The
// compiled build starts media-worker.js directly instead.
import { workerData } from 'node:worker_threads';

const { tsImport } = await import('tsx/esm/api');
await tsImport(workerData.entry, import.meta.url);
