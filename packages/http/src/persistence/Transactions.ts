/**
 * Transactions across the stores: every store's method is atomic on its own, and `transaction`
 * runs several, of one store or of several, as one (they share the `SqlClient`, so a statement
 * run inside joins the transaction of its fiber).
 *
 * The effect's own failures roll the transaction back and come out as they were; a `SqlError` is
 * a defect, as in every store. Reads inside are not kept by `RowCache` (they may see writes a
 * rollback takes back).
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer } from "effect"
import * as RowCache from "./RowCache.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * One transaction with one read: the database answers, and a write's way to it (the transaction
   * connection, SQLite's write lock) can be had now. Dies like any other statement when it cannot.
   */
  readonly probe: Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Transactions extends Context.Tag("Persistence/Transactions")<Transactions, Service>() {}

/**
 * Transactions over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    const run = SqlRow.transaction(sql)
    return {
      transaction: (effect) => run(RowCache.transactional(effect)),
      probe: run(SqlRow.exec(sql`SELECT 1`))
    }
  }
)

/**
 * `Transactions` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(Transactions, make)
