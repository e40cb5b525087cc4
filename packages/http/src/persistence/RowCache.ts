/**
 * A read cache for the rows every authenticated request reads (the access token by hash
 * from `Tokens`, its organisation and API client from `Accounts`, and the connection it names from
 * `ConnectionStore`) on the embedded SQLite database, checked against the database on every read,
 * so that it never serves a row another process or connection has changed: a revoked token, a
 * disconnected connection, a changed plan, a revoked or rotated API client or a moved sandbox
 * version is seen by the very next request.
 *
 * The check is SQLite's `PRAGMA data_version`, read on a connection of its own: it changes
 * whenever any other connection commits, this process's own connections included, and another
 * process's on the same file (such as `npm run admin`). Any commit empties the cache. Only rows
 * that exist are kept, and nothing read inside a transaction (`Transactions` marks its effect with
 * `transactional`).
 *
 * On Postgres the check is the generation of migration `0020_row_generation` (`wrapChecked`): a
 * one-row table that a trigger on the four tables moves on in the transaction of every update,
 * delete or truncate, whoever makes it (another API node, `npm run admin`, psql). It is read once per
 * request (`perRequest`; once per cached read outside one), before a kept row is used, and the rows
 * are used only while it equals the generation they were kept under (ADR 0030).
 *
 * @since 0.1.0
 */
import { Effect, FiberRef, Option } from "effect"
import { Lru } from "../Lru.js"
import type * as Accounts from "./Accounts.js"
import type * as ConnectionStore from "./ConnectionStore.js"
import type * as Tokens from "./Tokens.js"

/**
 * Whether the current fiber runs inside a transaction: its reads may see its own writes, which a
 * rollback takes back without a commit, so they are not kept.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const inTransaction: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * Runs `effect` as inside a transaction (what `Transactions.transaction` does): nothing it reads
 * is kept.
 *
 * @since 0.1.0
 * @category combinators
 */
export const transactional = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, inTransaction, true)

/** Above this many rows per table, the least recently used are dropped. */
const MAX_ROWS = 10_000

/**
 * The stores whose reads are cached: any implementation of the cached reads, the rest passed
 * through.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stores<
  A extends Pick<Accounts.Service, "getOrganisation" | "getClient">,
  T extends Pick<Tokens.Service, "getToken">,
  C extends Pick<ConnectionStore.Service, "getConnection">
> {
  readonly accounts: A
  readonly tokens: T
  readonly connections: C
}

/**
 * The generation a request read (`perRequest`), shared by the fibers it forks. A write through the
 * stores forgets it (`forgetting`), so the request's next cached read sees its own write.
 */
const requestGeneration: FiberRef.FiberRef<{ generation: unknown } | undefined> = FiberRef.unsafeMake<
  { generation: unknown } | undefined
>(undefined)

/** What `requestGeneration` holds before the request read the generation. */
const UNREAD: unique symbol = Symbol("unread")

/**
 * Runs `effect` as one request: the cached reads in it (outside a transaction) read the generation
 * once, at the first of them, and reuse it (`wrapChecked`). A change committed after that read is
 * seen by the next request.
 *
 * @since 0.1.0
 * @category combinators
 */
export const perRequest = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => Effect.locally(effect, requestGeneration, { generation: UNREAD }))

const forget = Effect.map(FiberRef.get(requestGeneration), (box) => {
  if (box !== undefined) box.generation = UNREAD
})

/**
 * Wraps the three stores with one cache checked against `generation` (on SQLite: `PRAGMA
 * data_version` on a connection of its own, about 20 µs through libsql, which every commit of every
 * connection changes, this process's included; on Postgres: `SELECT generation FROM
 * row_generation`), read once per request inside `perRequest`, otherwise once per
 * cached read, and never inside a transaction (there every read goes to the database). The kept
 * rows are used only while the generation read equals the one they were kept under; any other value
 * empties the cache. A row is kept under the generation read before it, so a change committed
 * between the two moves the generation and drops it at the next request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrapChecked = <
  A extends Pick<Accounts.Service, "getOrganisation" | "getClient">,
  T extends Pick<Tokens.Service, "getToken">,
  C extends Pick<ConnectionStore.Service, "getConnection">
>(stores: Stores<A, T, C>, generation: Effect.Effect<unknown>): Stores<A, T, C> =>
  wrapWith(
    stores,
    (transactional) =>
      transactional ? Effect.succeed(UNCACHED) : Effect.flatMap(FiberRef.get(requestGeneration), (box) => {
        if (box === undefined) return generation
        if (box.generation !== UNREAD) return Effect.succeed(box.generation)
        return Effect.tap(generation, (read) =>
          Effect.sync(() => {
            box.generation = read
          }))
      })
  )

/** A version under which nothing is read from, or kept in, the cache. */
const UNCACHED: unique symbol = Symbol("uncached")

const wrapWith = <
  A extends Pick<Accounts.Service, "getOrganisation" | "getClient">,
  T extends Pick<Tokens.Service, "getToken">,
  C extends Pick<ConnectionStore.Service, "getConnection">
>(stores: Stores<A, T, C>, check: (transactional: boolean) => Effect.Effect<unknown>): Stores<A, T, C> => {
  let seen: unknown = UNREAD
  const table = () => new Lru<unknown>(MAX_ROWS)
  const tables = { tokens: table(), organisations: table(), clients: table(), connections: table() }
  const cached = <X>(
    name: keyof typeof tables,
    key: string,
    read: Effect.Effect<Option.Option<X>>
  ): Effect.Effect<Option.Option<X>> =>
    Effect.flatMap(FiberRef.get(inTransaction), (transactional) =>
      Effect.flatMap(check(transactional), (version) => {
        if (version === UNCACHED) return read
        if (version !== seen) {
          // a commit since the rows were kept: any of them may be stale
          for (const t of Object.values(tables)) t.clear()
          seen = version
        }
        const hit = tables[name].get(key)
        if (hit !== undefined) return Effect.succeed(Option.some(hit as X))
        // Kept under the version read before it: a commit during the read changes the version, so
        // the row is dropped at the next check.
        return Effect.tap(read, (found) =>
          Effect.sync(() => {
            if (Option.isSome(found) && !transactional && seen === version) {
              tables[name].set(key, found.value)
            }
          }))
      }))
  const { accounts, connections, tokens } = stores
  return {
    accounts: {
      ...accounts,
      getOrganisation: (id: string) => cached("organisations", id, accounts.getOrganisation(id)),
      getClient: (id: string) => cached("clients", id, accounts.getClient(id))
    },
    tokens: { ...tokens, getToken: (hash: string) => cached("tokens", hash, tokens.getToken(hash)) },
    connections: {
      ...connections,
      getConnection: (id: string) => cached("connections", id, connections.getConnection(id))
    }
  }
}

/**
 * `service` with every method but `reads` followed (on success and on failure) by forgetting the
 * request's generation (`perRequest`): the request's next cached read reads it again, so it sees
 * its own write. The other requests and nodes read it anyway.
 *
 * @since 0.1.0
 * @category combinators
 */
export const forgetting = <S extends object>(service: S, reads: ReadonlyArray<keyof S>): S => {
  const wrapped: Record<string, unknown> = { ...(service as Record<string, unknown>) }
  for (const [name, method] of Object.entries(service as Record<string, unknown>)) {
    if (typeof method !== "function" || reads.includes(name as keyof S)) continue
    wrapped[name] = (...args: Array<unknown>) => {
      const result: unknown = method.apply(service, args)
      return Effect.isEffect(result) ? Effect.ensuring(result, forget) : result
    }
  }
  return wrapped as S
}

/**
 * `Transactions` whose transactions forget the request's generation when they end (a write inside
 * one commits only then).
 *
 * @since 0.1.0
 * @category combinators
 */
export const forgettingTransactions = <
  T extends { readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> }
>(transactions: T): T => ({
  ...transactions,
  transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.ensuring(transactions.transaction(effect), forget)
})
