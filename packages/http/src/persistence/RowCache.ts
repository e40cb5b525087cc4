/**
 * A read cache for the three rows every authenticated request reads (the access token by hash,
 * its organisation, and the connection it names) on the embedded SQLite database, checked against
 * the database on every read, so that it never serves a row another process or connection has
 * changed: a revoked token, a disconnected connection or a moved sandbox version is seen by the
 * very next request.
 *
 * The check is SQLite's `PRAGMA data_version`, read on a connection of its own: it changes
 * whenever any other connection commits, this process's own connections included, and another
 * process's on the same file (such as `npm run admin`). Any commit empties the cache. Only rows
 * that exist are kept, and nothing read inside a transaction. On Postgres there is no cache: `PRAGMA data_version` has no equivalent that
 * costs less than the three reads (ADR 0012).
 *
 * @since 0.1.0
 */
import { Effect, FiberRef, Option } from "effect"
import { Lru } from "../Lru.js"
import type { Service } from "./Repo.js"

const inTransaction = FiberRef.unsafeMake(false)

/** Above this many rows per table, the least recently used are dropped. */
const MAX_ROWS = 10_000

/**
 * Wraps a repository with the cache. `dataVersion` reads the database's change counter on a
 * connection of its own (synchronously: a prepared `PRAGMA data_version`, a few microseconds), so
 * that every commit of every other connection, this process's included, changes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (repo: Service, dataVersion: () => number): Service => {
  let seen: number | undefined
  const table = () => new Lru<unknown>(MAX_ROWS)
  const tables = { tokens: table(), organisations: table(), connections: table() }
  const cached = <A>(
    name: keyof typeof tables,
    key: string,
    read: Effect.Effect<Option.Option<A>>
  ): Effect.Effect<Option.Option<A>> =>
    Effect.suspend(() => {
      const version = dataVersion()
      if (version !== seen) {
        // a commit since the rows were kept: any of them may be stale
        tables.tokens.clear()
        tables.organisations.clear()
        tables.connections.clear()
        seen = version
      }
      const hit = tables[name].get(key)
      if (hit !== undefined) return Effect.succeed(Option.some(hit as A))
      // Kept under the version read before it: a commit during the read changes the version, so
      // the row is dropped at the next read.
      return Effect.tap(read, (found) =>
        Effect.flatMap(FiberRef.get(inTransaction), (transactional) =>
          Effect.sync(() => {
            if (Option.isSome(found) && !transactional && seen === version) {
              tables[name].set(key, found.value)
            }
          })))
    })
  return {
    ...repo,
    getToken: (hash) => cached("tokens", hash, repo.getToken(hash)),
    getOrganisation: (id) => cached("organisations", id, repo.getOrganisation(id)),
    getConnection: (id) => cached("connections", id, repo.getConnection(id)),
    // a transaction may see its own writes, which a rollback takes back without a commit
    transaction: (effect) => repo.transaction(Effect.locally(effect, inTransaction, true))
  }
}
