// The asynchronous form of a port (issue 27): the same methods, each
// answering a Promise. A store on a database server (PostgreSQL) implements
// ports in this form; the SQLite store answers synchronously.

/** Every method of T, returning a Promise of what it returned. */
export type Async<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};
