import { setFlagsFromString } from 'node:v8';

/**
 * Gives isolates created from now on (the media worker's) an old generation
 * that starts at `mb` instead of V8's few MB. Each call's session lives for
 * the call, long enough to be promoted, so under call churn the worker's old
 * generation fills with ended sessions and V8 ran a full collection every
 * 3-7 s (1.5-7 ms on the worker thread, holding every call's next packet);
 * with 64 MB it runs one when the heap reaches that size (README, load).
 *
 * Node has no per-worker setting for it (`resourceLimits` caps, it does not
 * start), so the V8 flag is set for the process before the worker is made:
 * V8 reads it when an isolate is created, so running isolates keep theirs.
 * 0 leaves V8's default.
 */
export function startWorkerOldSpaceAt(mb: number): void {
  if (mb > 0) setFlagsFromString(`--initial-old-space-size=${Math.floor(mb)}`);
}
