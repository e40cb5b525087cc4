/**
 * The column schemas read what each driver hands back: integers as numbers (SQLite) or decimal
 * strings and bigints (Postgres `BIGINT`, `COUNT(*)`), flags as 0/1 or booleans, JSON as text; and
 * they refuse what a column of theirs never holds. Then the same through a real SQLite file (the
 * Postgres shapes: `packages/http/test/SqlRow.pg.test.ts`).
 */
import { SqlClient } from "@effect/sql"
import { LibsqlClient } from "@effect/sql-libsql"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqlRow from "../src/SqlRow.js"

const decodes = <A, I>(schema: Schema.Schema<A, I>, input: unknown): A => Schema.decodeUnknownSync(schema)(input)
const refuses = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(schema)(input)), `${String(input)} should be refused`)

describe("SqlRow columns", () => {
  it("NumberFromColumn: a number, a BIGINT's decimal string or a bigint; nothing else", () => {
    assert.strictEqual(decodes(SqlRow.NumberFromColumn, 5), 5)
    assert.strictEqual(decodes(SqlRow.NumberFromColumn, 2.5), 2.5)
    assert.strictEqual(decodes(SqlRow.NumberFromColumn, "1700000000000"), 1_700_000_000_000)
    assert.strictEqual(decodes(SqlRow.NumberFromColumn, "-3"), -3)
    assert.strictEqual(decodes(SqlRow.NumberFromColumn, 42n), 42)
    for (const bad of ["", " ", "abc", "1x", null, undefined, true, {}]) refuses(SqlRow.NumberFromColumn, bad)
    assert.strictEqual(Schema.encodeSync(SqlRow.NumberFromColumn)(7), 7)
  })

  it("NumberOrNullFromColumn: null stays null", () => {
    assert.strictEqual(decodes(SqlRow.NumberOrNullFromColumn, null), null)
    assert.strictEqual(decodes(SqlRow.NumberOrNullFromColumn, "9"), 9)
  })

  it("BooleanFromColumn: 0/1 as stored (number, string, bigint) or a boolean; any other value is refused", () => {
    for (const yes of [1, "1", 1n, true]) assert.strictEqual(decodes(SqlRow.BooleanFromColumn, yes), true)
    // `Boolean("0")` is true: a decoder that coerced would read a Postgres "0" as set
    for (const no of [0, "0", 0n, false]) assert.strictEqual(decodes(SqlRow.BooleanFromColumn, no), false)
    for (const bad of [2, -1, "t", "true", "", null, undefined]) refuses(SqlRow.BooleanFromColumn, bad)
    assert.strictEqual(Schema.encodeSync(SqlRow.BooleanFromColumn)(true), 1)
    assert.strictEqual(Schema.encodeSync(SqlRow.BooleanFromColumn)(false), 0)
  })

  it("JsonColumn: the text parsed and checked by its schema", () => {
    const Origins = SqlRow.JsonColumn(Schema.Array(Schema.String))
    assert.deepStrictEqual(decodes(Origins, `["https://a.example"]`), ["https://a.example"])
    refuses(Origins, `{"a":1}`)
    refuses(Origins, `[1]`)
    refuses(Origins, `not json`)
    refuses(Origins, ["https://a.example"])
    assert.strictEqual(Schema.encodeSync(Origins)(["x"]), `["x"]`)
  })

  it("OptionalFromNull: a null column is an absent key", () => {
    const Row = Schema.Struct({ id: Schema.String, previous: SqlRow.OptionalFromNull(SqlRow.NumberFromColumn) })
    assert.deepStrictEqual(decodes(Row, { id: "a", previous: null }), { id: "a" })
    assert.isFalse("previous" in decodes(Row, { id: "a", previous: null }))
    assert.deepStrictEqual(decodes(Row, { id: "a", previous: "12" }), { id: "a", previous: 12 })
  })
})

/** A libsql client on a fresh file, removed with the scope. */
const SqliteLive = Layer.unwrapScoped(Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-sqlrow-test-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ),
  (dir) => LibsqlClient.layer({ url: `file:${path.join(dir, "rows.db")}` })
))

/** The columns of the stores' tables, as `migrations.ts` and `SyncStore.migration` declare them. */
const Row = Schema.Struct({
  small: SqlRow.NumberFromColumn,
  big: SqlRow.NumberFromColumn,
  missing: SqlRow.NumberOrNullFromColumn,
  set: SqlRow.BooleanFromColumn,
  unset: SqlRow.BooleanFromColumn,
  is_null: SqlRow.BooleanFromColumn,
  origins: SqlRow.JsonColumn(Schema.Array(Schema.String)),
  label: Schema.String
})
const toRow = SqlRow.decoder(Row)

describe("SqlRow on SQLite", () => {
  it.scoped("reads INTEGER, BIGINT, 0/1 flags, a boolean expression and JSON text through one row schema", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE t (small INTEGER NOT NULL, big BIGINT NOT NULL, missing BIGINT,
        set_flag INTEGER NOT NULL, unset_flag INTEGER NOT NULL, origins TEXT NOT NULL, label TEXT NOT NULL)`
      yield* SqlRow.exec(sql`INSERT INTO t ${
        sql.insert({
          small: 3,
          big: 1_700_000_000_000,
          missing: null,
          set_flag: SqlRow.flag(true),
          unset_flag: SqlRow.flag(false),
          origins: JSON.stringify(["https://a.example"]),
          label: "a"
        })
      }`)
      const statement = sql`SELECT small, big, missing, set_flag AS "set", unset_flag AS unset,
        missing IS NULL AS is_null, origins, label FROM t`
      const raw = (yield* SqlRow.rows(statement))[0]!
      // what the driver hands back: flags and the boolean expression as 0/1 numbers
      assert.strictEqual(raw.is_null, 1)
      assert.strictEqual(raw.unset, 0)
      assert.deepStrictEqual(yield* SqlRow.all(statement, toRow), [{
        small: 3,
        big: 1_700_000_000_000,
        missing: null,
        set: true,
        unset: false,
        is_null: true,
        origins: ["https://a.example"],
        label: "a"
      }])
      assert.strictEqual(yield* SqlRow.count(sql`SELECT COUNT(*) AS n FROM t`), 1)
      assert.isTrue((yield* SqlRow.one(sql`SELECT small, big FROM t WHERE label = 'none'`, toRow))._tag === "None")
    }).pipe(Effect.provide(SqliteLive)))

  it.scoped("a row its schema refuses is a defect, not a wrong value", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const exit = yield* Effect.exit(SqlRow.all(
        sql`SELECT 2 AS flag`,
        SqlRow.decoder(Schema.Struct({
          flag: SqlRow.BooleanFromColumn
        }))
      ))
      assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Die")
      const none = yield* Effect.exit(SqlRow.first(sql`SELECT 1 AS n WHERE 1 = 0`, SqlRow.decoder(SqlRow.CountRow)))
      assert.isTrue(Exit.isFailure(none) && none.cause._tag === "Die")
    }).pipe(Effect.provide(SqliteLive)))
})
