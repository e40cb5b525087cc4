/**
 * Reading rows of the SQL stores through one `Schema` per row shape, the same on SQLite (libsql)
 * and Postgres (node-postgres), and running their statements with `SqlError` as a defect.
 *
 * What the drivers hand back differs by column type, and the column schemas below take both:
 *
 * - integers: SQLite gives numbers; Postgres gives `INTEGER` as a number but `BIGINT` and
 *   `COUNT(*)` as decimal strings (or a bigint, with a custom parser): `NumberFromColumn`;
 * - flags: stored as 0/1 `INTEGER`s; a boolean expression (`body IS NULL`) is 0/1 on SQLite and a
 *   boolean on Postgres: `BooleanFromColumn`;
 * - JSON: stored as `TEXT`, parsed by its schema: `JsonColumn`;
 * - text: a string on both (`Schema.String`).
 *
 * A row schema is a `Schema.Struct` of these; `decoder` builds its decoder once (a module-level
 * constant per row shape), and `all`, `one` and `first` run a statement and decode its rows with
 * it. A row that does not match is a defect: the stores write only what they read.
 *
 * This module sits in the sync package, the lowest one with SQL stores, so that `SyncStore` and
 * http's persistence (which depends on sync) share it; core holds no I/O.
 *
 * @since 0.1.0
 */
import type { SqlClient, SqlError } from "@effect/sql"
import type { SchemaAST as AST } from "effect"
import { Effect, Option, ParseResult, Schema } from "effect"

/**
 * A row as the driver returns it.
 *
 * @since 0.1.0
 * @category models
 */
export type Row = Record<string, unknown>

/** A column value the schema refuses. */
const refuse = (ast: AST.AST, actual: unknown, expected: string) =>
  ParseResult.fail(new ParseResult.Type(ast, actual, `Expected ${expected}, got ${JSON.stringify(String(actual))}`))

/**
 * A number column on either backend: a number (SQLite; Postgres `INTEGER` and
 * `DOUBLE PRECISION`) as it is, a decimal string (Postgres `BIGINT` and `COUNT(*)`) or a bigint
 * converted; anything else, or a string that is not a number, is refused. Encodes to the number.
 *
 * One parse function per column (`Schema.declare`), not a union of transformations: rows are
 * decoded on every read, and this keeps a column as cheap as `Schema.Number`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NumberFromColumn: Schema.Schema<number, number | string | bigint> = Schema.declare<
  number,
  number | string | bigint,
  readonly []
>([], {
  decode: () => (u, _, ast) => {
    if (typeof u === "number") return ParseResult.succeed(u)
    if (typeof u === "bigint") return ParseResult.succeed(Number(u))
    if (typeof u === "string" && u.trim() !== "") {
      const n = Number(u)
      if (!Number.isNaN(n)) return ParseResult.succeed(n)
    }
    return refuse(ast, u, "a number column")
  },
  encode: () => (u, _, ast) => typeof u === "number" ? ParseResult.succeed(u) : refuse(ast, u, "a number")
}, { identifier: "NumberFromColumn" })

/**
 * A nullable number column.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NumberOrNullFromColumn = Schema.NullOr(NumberFromColumn)

/**
 * A flag on either backend: stored as a 0/1 `INTEGER` (a number, or a decimal string or bigint
 * from a `BIGINT`), or a boolean expression's value (0/1 on SQLite, a boolean on Postgres). Any
 * other value is refused, 2 included. Encodes to 0/1, as the flags are stored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BooleanFromColumn: Schema.Schema<boolean, boolean | number | string | bigint> = Schema.declare<
  boolean,
  boolean | number | string | bigint,
  readonly []
>([], {
  decode: () => (u, _, ast) =>
    u === true || u === 1 || u === "1" || u === 1n
      ? ParseResult.succeed(true)
      : u === false || u === 0 || u === "0" || u === 0n
      ? ParseResult.succeed(false)
      : refuse(ast, u, "a 0/1 flag"),
  encode: () => (u, _, ast) => typeof u === "boolean" ? ParseResult.succeed(u ? 1 : 0) : refuse(ast, u, "a boolean")
}, { identifier: "BooleanFromColumn" })

/**
 * A JSON column: `TEXT` holding `schema`'s encoded form. Decodes by parsing and then `schema`;
 * encodes to the JSON text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonColumn = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, string, R> =>
  Schema.parseJson(schema)

/**
 * A nullable column whose `null` is an absent key on the decoded side (`{ k?: A }`), and an
 * absent key is written as `null`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OptionalFromNull = <A, I, R>(self: Schema.Schema<A, I, R>) =>
  Schema.optionalToOptional(Schema.NullOr(self), Schema.typeSchema(self), {
    decode: Option.filter((a): a is A => a !== null),
    encode: (o) => o
  })

/**
 * A flag as it is stored (0/1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const flag = (b: boolean): number => (b ? 1 : 0)

/**
 * The decoder of a row schema, built once: call it at module level, one per row shape. It throws
 * a `ParseError` on a row that does not match (a defect where `all`, `one` and `first` run it).
 *
 * @since 0.1.0
 * @category constructors
 */
export const decoder = <A, I>(schema: Schema.Schema<A, I, never>): (row: unknown) => A =>
  Schema.decodeUnknownSync(schema)

/**
 * The rows of a statement, as the driver returns them; a `SqlError` is a defect.
 *
 * @since 0.1.0
 * @category combinators
 */
export const rows = (
  statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>
): Effect.Effect<ReadonlyArray<Row>> => Effect.orDie(statement)

/**
 * Every row of a statement, decoded (see `decoder`); a `SqlError` or a row that does not match is
 * a defect.
 *
 * @since 0.1.0
 * @category combinators
 */
export const all = <A>(
  statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>,
  decode: (row: unknown) => A
): Effect.Effect<ReadonlyArray<A>> =>
  Effect.map(rows(statement), (rs) => {
    const out = new Array<A>(rs.length)
    for (let i = 0; i < rs.length; i++) out[i] = decode(rs[i])
    return out
  })

/**
 * The first row of a statement, decoded, if any.
 *
 * @since 0.1.0
 * @category combinators
 */
export const one = <A>(
  statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>,
  decode: (row: unknown) => A
): Effect.Effect<Option.Option<A>> =>
  Effect.map(rows(statement), (rs) => rs.length === 0 ? Option.none() : Option.some(decode(rs[0])))

/**
 * The first row of a statement, decoded: for a statement that always returns one (`COUNT(*)`,
 * `RETURNING` of a row known to exist). No row is a defect.
 *
 * @since 0.1.0
 * @category combinators
 */
export const first = <A>(
  statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>,
  decode: (row: unknown) => A
): Effect.Effect<A> =>
  Effect.flatMap(
    rows(statement),
    (rs) => rs.length === 0 ? Effect.dieMessage("Expected a row, got none") : Effect.sync(() => decode(rs[0]))
  )

/**
 * Runs a statement for its effect; a `SqlError` is a defect.
 *
 * @since 0.1.0
 * @category combinators
 */
export const exec = (statement: Effect.Effect<unknown, SqlError.SqlError>): Effect.Effect<void> =>
  Effect.asVoid(Effect.orDie(statement))

/** Carries the caller's own failure through `withTransaction`, apart from the driver's `SqlError`. */
class TransactionFailure<E> {
  constructor(readonly error: E) {}
}

/**
 * Runs `effect` in one transaction on `sql`. The caller's failures roll back and come out as they
 * were; the driver's become defects.
 *
 * @since 0.1.0
 * @category combinators
 */
export const transaction =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    sql.withTransaction(Effect.mapError(effect, (e) => new TransactionFailure(e))).pipe(
      Effect.catchAll((e) => e instanceof TransactionFailure ? Effect.fail(e.error as E) : Effect.die(e))
    )

/**
 * The row of `SELECT COUNT(*) AS n …`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CountRow = Schema.Struct({ n: NumberFromColumn })

const decodeCount = decoder(CountRow)

/**
 * The count of a `SELECT COUNT(*) AS n …` statement.
 *
 * @since 0.1.0
 * @category combinators
 */
export const count = (statement: Effect.Effect<ReadonlyArray<Row>, SqlError.SqlError>): Effect.Effect<number> =>
  Effect.map(first(statement, decodeCount), (r) => r.n)
