/**
 * Which of the migrations this code knows (`migrations.ts`) the database has applied, as the
 * Migrator's table (`effect_sql_migrations`) records them. `/readyz` is not ready while one is
 * missing: a node started against a database another version migrated back, or restored from an
 * older dump.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { loader } from "./migrations.js"

/**
 * The Migrator's table (`@effect/sql`'s default name).
 *
 * @since 0.1.0
 * @category constants
 */
export const table = "effect_sql_migrations"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The names (`NNNN_name`) of the migrations this code knows that the database has not applied;
   * empty when the schema is current. Dies like any other statement when the database cannot answer.
   */
  readonly pending: Effect.Effect<ReadonlyArray<string>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class MigrationState extends Context.Tag("Persistence/MigrationState")<MigrationState, Service>() {}

/**
 * The state over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => ({
    pending: Effect.gen(function*() {
      const known = yield* Effect.orDie(loader)
      const rows = yield* sql<{ readonly migration_id: number | string }>`SELECT migration_id FROM ${sql(table)}`
        .withoutTransform
      const applied = new Set(rows.map((row) => Number(row.migration_id)))
      return known.filter(([id]) => !applied.has(id)).map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)
    }).pipe(Effect.orDie)
  })
)

/**
 * `MigrationState` over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<MigrationState, never, SqlClient.SqlClient> = Layer.effect(MigrationState, make)
