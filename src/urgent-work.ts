/**
 * Cooperative yield points for work that must not wait behind a long task
 * on the main thread. Call set-up runs as chains of callbacks (HTTP, the
 * callee protections, SQLite, SIP, the agent's handshake) that together
 * can hold the event loop for several milliseconds; agent audio the media
 * worker received meanwhile would wait for the whole chain. Code with such
 * chains calls `runUrgentWork()` between its steps, and the media worker
 * engine registers its audio drain here, so received audio goes on to the
 * agents within about one step.
 */
type Work = () => void;

const registered = new Set<Work>();
let running = false;

/** Registers `work`; returns the function that unregisters it. */
export function registerUrgentWork(work: Work): () => void {
  registered.add(work);
  return () => registered.delete(work);
}

/** Runs the registered work now (not re-entrantly: work that reaches a yield point does not recurse). */
export function runUrgentWork(): void {
  if (running || registered.size === 0) return;
  running = true;
  try {
    for (const work of registered) work();
  } finally {
    running = false;
  }
}
