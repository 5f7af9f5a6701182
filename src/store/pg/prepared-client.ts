// A node-postgres client whose parameterised queries are named prepared
// statements (issue 27): PostgreSQL parses and plans each statement once per
// connection instead of at every call. On loopback this took a repository's
// round trip from about 240 µs to 130 µs (docs/benchmarks.md), and the
// daemon's store waits for every round trip.
//
// The name is a hash of the text, so the same text is the same statement on
// every connection. Queries without parameters (BEGIN, COMMIT, several
// statements in one string) stay simple queries.
import { createHash } from 'node:crypto';
import pg from 'pg';

const names = new Map<string, string>();
/** Texts built at run time (a filter's variants) stop being prepared past this many. */
const MAX_STATEMENTS = 2_000;

/** The prepared statement's name for a query text; undefined past MAX_STATEMENTS texts. */
export function statementName(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_STATEMENTS) {
    name = `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;
const simpleQuery = pg.Client.prototype.query as unknown as QueryFn;

export class PreparedClient extends pg.Client {}

// pg.Client's query has many overloads; only (text, values[, callback]) changes here.
(PreparedClient.prototype as unknown as { query: QueryFn }).query = function (
  this: pg.Client,
  ...args: unknown[]
): unknown {
  const [text, values, ...rest] = args;
  const name = typeof text === 'string' && Array.isArray(values) ? statementName(text) : undefined;
  if (name === undefined) return simpleQuery.apply(this, args);
  return simpleQuery.call(this, { name, text, values }, ...rest);
};
