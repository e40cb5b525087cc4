/**
 * The column schemas of `@tracebridge/sync`'s `SqlRow` on Postgres (`npm run test:pg`,
 * TEST_DATABASE_URL; a fresh schema): `BIGINT` and `COUNT(*)` come back as decimal strings, a
 * boolean expression as a boolean, `INTEGER` as a number, and one row schema reads them all as
 * SQLite's do (`packages/sync/test/SqlRow.test.ts`).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { SqlRow } from "@tracebridge/sync"
import { Effect, Exit, Layer, Redacted, Schema } from "effect"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("SqlRow.pg.test.ts")

const PgLive = Layer.unwrapScoped(
  Effect.map(freshSchema(url, "sql_row"), (scoped) => PgClient.layer({ url: Redacted.make(scoped) }))
)

/** The columns of the stores' tables, as `migrations.ts` and `SyncStore.migration` declare them. */
const Row = Schema.Struct({
  small: SqlRow.NumberFromColumn,
  big: SqlRow.NumberFromColumn,
  missing: SqlRow.NumberOrNullFromColumn,
  set: SqlRow.BooleanFromColumn,
  unset: SqlRow.BooleanFromColumn,
  is_null: SqlRow.BooleanFromColumn,
  ratio: SqlRow.NumberFromColumn,
  origins: SqlRow.JsonColumn(Schema.Array(Schema.String)),
  label: Schema.String
})
const toRow = SqlRow.decoder(Row)

describe("SqlRow on Postgres", () => {
  it.scoped("reads BIGINT strings, INTEGER flags, a boolean expression and JSON text through one row schema", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE t (small INTEGER NOT NULL, big BIGINT NOT NULL, missing BIGINT,
        set_flag INTEGER NOT NULL, unset_flag INTEGER NOT NULL, ratio DOUBLE PRECISION NOT NULL,
        origins TEXT NOT NULL, label TEXT NOT NULL)`
      yield* SqlRow.exec(sql`INSERT INTO t ${
        sql.insert({
          small: 3,
          big: 1_700_000_000_000,
          missing: null,
          set_flag: SqlRow.flag(true),
          unset_flag: SqlRow.flag(false),
          ratio: 0.5,
          origins: JSON.stringify(["https://a.example"]),
          label: "a"
        })
      }`)
      const statement = sql`SELECT small, big, missing, set_flag AS "set", unset_flag AS unset,
        missing IS NULL AS is_null, ratio, origins, label FROM t`
      const raw = (yield* SqlRow.rows(statement))[0]!
      // what the driver hands back: BIGINT as a string, the boolean expression as a boolean
      assert.strictEqual(raw.big, "1700000000000")
      assert.strictEqual(raw.is_null, true)
      assert.strictEqual(raw.unset, 0)
      assert.deepStrictEqual(yield* SqlRow.all(statement, toRow), [{
        small: 3,
        big: 1_700_000_000_000,
        missing: null,
        set: true,
        unset: false,
        is_null: true,
        ratio: 0.5,
        origins: ["https://a.example"],
        label: "a"
      }])
      const counted = (yield* SqlRow.rows(sql`SELECT COUNT(*) AS n FROM t`))[0]!
      assert.strictEqual(typeof counted.n, "string")
      assert.strictEqual(yield* SqlRow.count(sql`SELECT COUNT(*) AS n FROM t`), 1)
    }).pipe(Effect.provide(PgLive)))

  it.scoped("a row its schema refuses is a defect, not a wrong value", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const exit = yield* Effect.exit(
        SqlRow.all(sql`SELECT 'yes' AS flag`, SqlRow.decoder(Schema.Struct({ flag: SqlRow.BooleanFromColumn })))
      )
      assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Die")
    }).pipe(Effect.provide(PgLive)))
})
