/**
 * Values built once per driver connection: a store's prepared statements, made at a loop's start on every call, cost
 * more than the loop itself when the loop is short (drizzle renders a statement with `$(n)` placeholders anew each
 * time, 10-40 µs; a one-minion re-match prepared ten of them). Kept by the handle's native client, which on SQLite is
 * the one connection (the engine and its transactions share it) and on PostgreSQL the pool or one transaction's
 * connection, so a statement is never used on a connection it was not prepared on.
 */
import type { Queryable } from './engine'

/** `make(q)` built on first use per native client of `q`, then the same value for every handle on that client. */
export function perHandle<T>(make: (q: Queryable) => T): (q: Queryable) => T {
  const made = new WeakMap<object, T>()
  return (q) => {
    const client = q.native.client as object
    let v = made.get(client)
    if (v === undefined) made.set(client, (v = make(q)))
    return v
  }
}
