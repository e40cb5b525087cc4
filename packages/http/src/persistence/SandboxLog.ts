/**
 * Each sandbox connection's change log: the writes made to its emulated world, appended with
 * optimistic concurrency against the connection's `sandbox_version`, with its upstream fault, so
 * that every process replays the same world from the seed and the log.
 *
 * SQL over the `SqlClient` in context (SQLite or Postgres, migrated by `Database.ts`); the
 * version and fault are columns of the `connections` table, the changes rows of `sandbox_changes`.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql"
import { SqlRow } from "@tracebridge/sync"
import { Context, Effect, Layer, Option, Schema } from "effect"

const { all, exec, rows, transaction } = SqlRow

/** @since 0.1.0 @category models */
export interface SandboxChange {
  readonly connection_id: string
  /** The connection's `sandbox_version` once this change was appended (1, 2, … after each reset's). */
  readonly seq: number
  /** JSON text of the change (a sandbox `Change` without functions). */
  readonly change: string
  readonly created_at: number
}

/**
 * A sandbox connection's stored state, read in one statement (one snapshot): its version, its
 * fault, and the changes of its log after a given sequence.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogSnapshot {
  readonly version: number
  readonly fault: string | null
  /** The changes with `after < seq <= version`, in order. */
  readonly changes: ReadonlyArray<SandboxChange>
}

/**
 * The sandbox change logs. Every method is atomic on its own; `Transactions` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** A sandbox connection's version, fault and the changes after `after`; none for an unknown connection. */
  readonly sandboxLog: (connectionId: string, after: number) => Effect.Effect<Option.Option<LogSnapshot>>
  /**
   * Appends changes to a sandbox connection's log if its version is still `expected` (optimistic
   * concurrency): the version becomes `expected + changes.length` and the changes get the
   * sequences in between, atomically. False, with nothing written, when another write got there
   * first.
   */
  readonly appendSandboxChanges: (
    connectionId: string,
    expected: number,
    changes: ReadonlyArray<{ readonly change: string; readonly created_at: number }>
  ) => Effect.Effect<boolean>
  /** Sets (JSON text) or clears (null) a sandbox connection's upstream fault. */
  readonly setSandboxFault: (connectionId: string, fault: string | null) => Effect.Effect<void>
  /**
   * Resets a sandbox connection: forgets its change log and its fault and raises its version, so
   * that every process regenerates its world from the seed on its next request.
   */
  readonly resetSandbox: (connectionId: string) => Effect.Effect<void>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class SandboxLog extends Context.Tag("Persistence/SandboxLog")<SandboxLog, Service>() {}

/**
 * A row of `sandboxLog`'s statement: the connection's version and fault, with one change of its
 * log, or none (a log with no change after `after`: the LEFT JOIN's nulls).
 */
const LogRow = Schema.Struct({
  sandbox_version: SqlRow.NumberFromColumn,
  sandbox_fault: Schema.NullOr(Schema.String),
  seq: SqlRow.NumberOrNullFromColumn,
  change: Schema.NullOr(Schema.String),
  created_at: SqlRow.NumberOrNullFromColumn
})
const toLogRow = SqlRow.decoder(LogRow)

/**
 * The store over the `SqlClient` in context. The schema must already be migrated.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql): Service => {
    const inTransaction = transaction(sql)
    return {
      sandboxLog: (connectionId, after) =>
        // One statement, so one snapshot: the version, the fault and the changes agree.
        Effect.map(
          all(
            sql`SELECT c.sandbox_version, c.sandbox_fault, s.seq, s.change, s.created_at
                FROM connections c
                LEFT JOIN sandbox_changes s
                  ON s.connection_id = c.id AND s.seq > ${after} AND s.seq <= c.sandbox_version
                WHERE c.id = ${connectionId}
                ORDER BY s.seq`,
            toLogRow
          ),
          (rs) => {
            if (rs.length === 0) return Option.none()
            const changes: Array<SandboxChange> = []
            for (const r of rs) {
              if (r.seq === null || r.change === null || r.created_at === null) continue
              changes.push({ connection_id: connectionId, seq: r.seq, change: r.change, created_at: r.created_at })
            }
            return Option.some({ version: rs[0]!.sandbox_version, fault: rs[0]!.sandbox_fault, changes })
          }
        ),
      appendSandboxChanges: (connectionId, expected, changes) =>
        changes.length === 0 ? Effect.succeed(true) : inTransaction(Effect.gen(function*() {
          // The row lock of this update serialises writers; one that read an older version matches no row.
          const moved = yield* rows(
            sql`UPDATE connections SET sandbox_version = ${expected + changes.length}
                WHERE id = ${connectionId} AND sandbox_version = ${expected} RETURNING id`
          )
          if (moved.length === 0) return false
          yield* exec(sql`INSERT INTO sandbox_changes ${
            sql.insert(changes.map((c, i) => ({
              connection_id: connectionId,
              seq: expected + 1 + i,
              change: c.change,
              created_at: c.created_at
            })))
          }`)
          return true
        })),
      setSandboxFault: (connectionId, fault) =>
        exec(sql`UPDATE connections SET sandbox_fault = ${fault} WHERE id = ${connectionId}`),
      resetSandbox: (connectionId) =>
        inTransaction(Effect.gen(function*() {
          yield* exec(
            sql`UPDATE connections SET sandbox_version = sandbox_version + 1, sandbox_fault = ${null}
                WHERE id = ${connectionId}`
          )
          yield* exec(sql`DELETE FROM sandbox_changes WHERE connection_id = ${connectionId}`)
        }))
    }
  }
)

/**
 * `SandboxLog` over the `SqlClient` in context (run the migrations first: `Database.ts` does).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SandboxLog, never, SqlClient.SqlClient> = Layer.effect(SandboxLog, make)
