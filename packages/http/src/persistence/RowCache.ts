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
 * On Postgres the check is `RowChanges.version`: a notice from a trigger on the four tables,
 * received on a listening connection of the node's own (`NOTIFY`, sent at commit to every node), or
 * this node's own write (`notifying`); no listener, no cache (ADR 0030).
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
 * Wraps the three stores with one cache (a commit empties every table). `dataVersion` reads
 * the database's change counter on a connection of its own (synchronously: a prepared
 * `PRAGMA data_version`, a few microseconds), so that every commit of every other connection,
 * this process's included, changes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = <
  A extends Pick<Accounts.Service, "getOrganisation" | "getClient">,
  T extends Pick<Tokens.Service, "getToken">,
  C extends Pick<ConnectionStore.Service, "getConnection">
>(stores: Stores<A, T, C>, dataVersion: () => number): Stores<A, T, C> => {
  let seen: number | undefined
  const table = () => new Lru<unknown>(MAX_ROWS)
  const tables = { tokens: table(), organisations: table(), clients: table(), connections: table() }
  const cached = <X>(
    name: keyof typeof tables,
    key: string,
    read: Effect.Effect<Option.Option<X>>
  ): Effect.Effect<Option.Option<X>> =>
    Effect.suspend(() => {
      const version = dataVersion()
      if (version !== seen) {
        // a commit since the rows were kept: any of them may be stale
        for (const t of Object.values(tables)) t.clear()
        seen = version
      }
      const hit = tables[name].get(key)
      if (hit !== undefined) return Effect.succeed(Option.some(hit as X))
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

/** The box of the transaction the fiber runs in: set when a write in it changed a cached table. */
const pendingWrites: FiberRef.FiberRef<{ dirty: boolean } | undefined> = FiberRef.unsafeMake<
  { dirty: boolean } | undefined
>(undefined)

/**
 * What `notifying` needs of `RowChanges`: move the version now, and wait until the other nodes
 * were told.
 *
 * @since 0.1.0
 * @category models
 */
export interface Notices {
  readonly bump: () => void
  readonly fence: Effect.Effect<void>
}

const afterWrite = (notices: Notices) =>
  Effect.flatMap(FiberRef.get(pendingWrites), (box) => {
    notices.bump()
    if (box === undefined) return notices.fence
    // inside a transaction: the change is not committed yet; the transaction fences when it ends
    box.dirty = true
    return Effect.void
  })

/**
 * `service` with every method but `reads` followed by `notices` (on success and on failure): the
 * version moves at once, so this node never serves a row it changed, and, outside a transaction,
 * the answer waits for the fence, so the other nodes were told before it. Inside a transaction
 * (`notifyingTransactions`) the fence waits for its end.
 *
 * @since 0.1.0
 * @category combinators
 */
export const notifying = <S extends object>(
  service: S,
  reads: ReadonlyArray<keyof S>,
  notices: Notices
): S => {
  const wrapped: Record<string, unknown> = { ...(service as Record<string, unknown>) }
  for (const [name, method] of Object.entries(service as Record<string, unknown>)) {
    if (typeof method !== "function" || reads.includes(name as keyof S)) continue
    wrapped[name] = (...args: Array<unknown>) => {
      const result: unknown = method.apply(service, args)
      return Effect.isEffect(result) ? Effect.ensuring(result, afterWrite(notices)) : result
    }
  }
  return wrapped as S
}

/**
 * `Transactions` whose outermost transaction, when a write in it went through `notifying`, moves
 * the version again and fences after its commit (or rollback).
 *
 * @since 0.1.0
 * @category combinators
 */
export const notifyingTransactions = <
  T extends { readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> }
>(transactions: T, notices: Notices): T => ({
  ...transactions,
  transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.flatMap(FiberRef.get(pendingWrites), (outer) => {
      if (outer !== undefined) return transactions.transaction(effect)
      const box = { dirty: false }
      return transactions.transaction(Effect.locally(effect, pendingWrites, box)).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (!box.dirty) return Effect.void
          notices.bump()
          return notices.fence
        }))
      )
    })
})
