/**
 * What every SQL store shares: reading column values (times are integers, epoch ms; BIGINT, which
 * Postgres returns as strings, so every number is converted on the way out; flags are 0/1
 * integers), running a statement with `SqlError` as a defect (the stores' error channels stay
 * `never`), and a transaction that lets the caller's own failures through.
 */
import type { SqlClient, SqlError } from "@effect/sql"
import { Effect, Option } from "effect"

/** A row as the driver returns it. */
export type Row = Record<string, unknown>

export const num = (u: unknown): number => typeof u === "number" ? u : Number(u)
export const numOrNull = (u: unknown): number | null => u === null || u === undefined ? null : num(u)
export const str = (u: unknown): string => String(u)
export const strOrNull = (u: unknown): string | null => u === null || u === undefined ? null : String(u)
export const bool = (u: unknown): boolean => u === true || num(u) === 1
export const flag = (b: boolean): number => b ? 1 : 0

/** The rows of a statement; a `SqlError` is a defect. */
export const rows = (statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>) => Effect.orDie(statement)

/** The first row of a statement, converted, if any. */
export const one = <A>(statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>, to: (r: Row) => A) =>
  Effect.map(rows(statement), (rs) => Option.map(Option.fromNullable(rs[0]), to))

/** Runs a statement for its effect. */
export const exec = (statement: Effect.Effect<unknown, SqlError.SqlError>) => Effect.asVoid(Effect.orDie(statement))

/** Carries the caller's own failure through `withTransaction`, apart from the driver's `SqlError`. */
class TransactionFailure<E> {
  constructor(readonly error: E) {}
}

/**
 * Runs `effect` in one transaction on `sql`. The caller's failures roll back and come out as they
 * were; the driver's become defects.
 */
export const transaction =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    sql.withTransaction(Effect.mapError(effect, (e) => new TransactionFailure(e))).pipe(
      Effect.catchAll((e) => e instanceof TransactionFailure ? Effect.fail(e.error as E) : Effect.die(e))
    )
