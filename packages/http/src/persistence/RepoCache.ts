/**
 * A short-lived read cache in front of the repository for the three rows every authenticated
 * request reads: the access token (by hash), its organisation, and the connection it names. On the
 * embedded SQLite these three queries were a third of a sandbox read's time.
 *
 * What keeps it correct:
 *
 * - only rows that exist are kept (a token issued a moment ago is never hidden by a cached miss);
 * - every write through this repository that can change those rows (`useToken`, `revokeFamily`,
 *   `revokeConnectionTokens`, `setPlan`, `updateConnection`, `replaceCiphertext`, and anything run
 *   in a `transaction`) empties the cache, and a read that overlapped a write is not kept;
 * - nothing read inside a transaction is kept (it may be rolled back);
 * - a row is kept at most `TRACEBRIDGE_READ_CACHE_MS` (default 1000; 0 turns the cache off), by
 *   Effect's `Clock`. That bound is what another process's write can take to be seen here (several
 *   API processes on one Postgres); within one process every write is seen at once.
 *
 * `main.ts` installs it over the configured database; tests build the API without it unless they
 * ask for it.
 *
 * @since 0.1.0
 */
import { Clock, Config, Effect, FiberRef, Layer, Option } from "effect"
import { Lru } from "../Lru.js"
import type { Service } from "./Repo.js"
import { Repo } from "./Repo.js"

/**
 * @since 0.1.0
 * @category config
 */
export const ttl: Config.Config<number> = Config.integer("TRACEBRIDGE_READ_CACHE_MS").pipe(
  Config.withDefault(1000),
  Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 })
)

const inTransaction = FiberRef.unsafeMake(false)

/** Above this many rows per table, the least recently used are dropped. */
const MAX_ROWS = 10_000

/**
 * Wraps a repository with the cache (`ttlMillis` 0 returns it as it is).
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (repo: Service, ttlMillis: number): Service => {
  if (ttlMillis <= 0) return repo
  let generation = 0
  const table = () => new Lru<{ readonly value: unknown; readonly until: number }>(MAX_ROWS)
  const tables = { tokens: table(), organisations: table(), connections: table() }
  const clear = () => {
    generation++
    tables.tokens.clear()
    tables.organisations.clear()
    tables.connections.clear()
  }
  const cached = <A, E, R>(
    table: keyof typeof tables,
    key: string,
    read: Effect.Effect<Option.Option<A>, E, R>
  ): Effect.Effect<Option.Option<A>, E, R> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const rows = tables[table]
      const hit = rows.get(key)
      if (hit !== undefined && hit.until > now) return Effect.succeed(Option.some(hit.value as A))
      const before = generation
      return Effect.tap(read, (found) =>
        Effect.flatMap(FiberRef.get(inTransaction), (transactional) =>
          Effect.sync(() => {
            if (Option.isNone(found) || transactional || generation !== before) {
              return
            }
            rows.set(key, { value: found.value, until: now + ttlMillis })
          })))
    })
  /** A write: the cache is emptied before it runs and again once it is done. */
  const writing = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.ensuring(Effect.zipRight(Effect.sync(clear), effect), Effect.sync(clear))
  return {
    ...repo,
    getToken: (hash) => cached("tokens", hash, repo.getToken(hash)),
    getOrganisation: (id) => cached("organisations", id, repo.getOrganisation(id)),
    getConnection: (id) => cached("connections", id, repo.getConnection(id)),
    useToken: (...args) => writing(repo.useToken(...args)),
    revokeFamily: (...args) => writing(repo.revokeFamily(...args)),
    revokeConnectionTokens: (...args) => writing(repo.revokeConnectionTokens(...args)),
    setPlan: (...args) => writing(repo.setPlan(...args)),
    updateConnection: (...args) => writing(repo.updateConnection(...args)),
    replaceCiphertext: (...args) => writing(repo.replaceCiphertext(...args)),
    transaction: (effect) => writing(repo.transaction(Effect.locally(effect, inTransaction, true)))
  }
}

/**
 * The cache over the `Repo` below it, configured by `TRACEBRIDGE_READ_CACHE_MS`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Repo, never, Repo> = Layer.effect(
  Repo,
  Effect.zipWith(Repo, Effect.orDie(ttl), wrap)
)
