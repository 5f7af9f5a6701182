// The keys a unit of work serializes on (issue 27; docs/decisions/
// multi-node-store.md rule 2). Two transactions naming one key, on any
// daemon, run one after the other; a store with a single writer (SQLite)
// serializes everything anyway and ignores them.

/** Decisions about one number of one company (protections, one call per number). */
export function numberKey(companyId: string, phoneNumber: string): string {
  return `number:${companyId}:${phoneNumber}`;
}

/** A company's channel and concurrency counts (plan limits). */
export function companyKey(companyId: string): string {
  return `company:${companyId}`;
}

/** A trunk's channel count (its maxChannels). */
export function trunkKey(trunkId: string): string {
  return `trunk:${trunkId}`;
}
